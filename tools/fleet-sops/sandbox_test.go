package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMain runs main() when the test binary is started as fleet-sops by a test below. The hooks are
// in this test file only: the built tool has no switch that loosens a bound.
func TestMain(m *testing.M) {
	switch os.Getenv("FLEET_SOPS_TEST_AS") {
	case "main":
		main()
		return
	case "main-without-expansion-check": // so the bomb reaches SOPS's store, to test the memory bound itself
		maxExpandedNodes = 1 << 40
		main()
		return
	case "probe":
		probeSandbox()
		return
	}
	os.Exit(m.Run())
}

// fakeSopsBomb: a file that only looks SOPS-encrypted (a made-up `sops` block with a MAC) and holds
// nested anchors in its second document: 9^9 strings once expanded.
func fakeSopsBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: fake\nsops:\n  age:\n    - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n      enc: x\n")
	b.WriteString("  lastmodified: \"2026-01-01T00:00:00Z\"\n  mac: ENC[AES256_GCM,data:AAAA,iv:AAAA,tag:AAAA,type:str]\n  version: 3.9.0\n---\n")
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n")
		prev = n
	}
	return b.String()
}

func runAsTool(t *testing.T, as string, stdin []byte, args ...string) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"decrypt"}, args...)...)
	cmd.Env = []string{"FLEET_SOPS_TEST_AS=" + as}
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("fleet-sops did not end within 60 s: unbounded")
	}
	return
}

func bombRequest(t *testing.T) []byte {
	k := newKey(t)
	data, _ := json.Marshal(request{Identities: k.Identity, Files: []file{{Name: "team/secrets/bomb.yaml", Content: fakeSopsBomb()}}})
	return data
}

func TestTheAliasBombIsRefusedBeforeSOPSReadsIt(t *testing.T) {
	stdout, stderr, code, took := runAsTool(t, "main", bombRequest(t), "--memory-mib", "256")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res response
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if msg := res.Files["team/secrets/bomb.yaml"].Error; !strings.Contains(msg, "more than 200000 YAML nodes once its aliases are expanded") {
		t.Fatalf("the bomb was not refused by its expansion: %q", msg)
	}
	if took > 10*time.Second {
		t.Fatalf("the refusal took %s", took)
	}
}

func TestTheMemoryLimitEndsTheDecryptionNamingTheFile(t *testing.T) {
	_, stderr, code, took := runAsTool(t, "main-without-expansion-check", bombRequest(t), "--sandbox", "--memory-mib", "256", "--job-timeout", "120s")
	// The watchdog names the limit; or, when an allocation outruns its 5-ms look, the address-space
	// rlimit behind it ends the process first (Go's "cannot allocate memory"): the caller reads both
	// as the memory limit of the file in flight.
	byWatchdog := code == 3 && strings.Contains(stderr, `fleet-sops-limit memory "team/secrets/bomb.yaml"`)
	byRlimit := code == 2 && regexp.MustCompile(`(?m)^fatal error: (runtime: )?(out of memory|cannot allocate memory)`).MatchString(stderr)
	if !strings.Contains(stderr, `fleet-sops-file "team/secrets/bomb.yaml"`) || !(byWatchdog || byRlimit) {
		t.Fatalf("exit %d, stderr:\n%.2000s", code, stderr)
	}
	if took > 20*time.Second {
		t.Fatalf("the memory limit took %s to end it", took)
	}
}

func TestAFileOverItsTimeEndsTheDecryptionNamingTheFile(t *testing.T) {
	// At 1 ms per file the bomb's expansion (stopped by memory otherwise) runs out of time first.
	_, stderr, code, _ := runAsTool(t, "main-without-expansion-check", bombRequest(t), "--job-timeout", "1ms")
	if code != 3 || !strings.Contains(stderr, `fleet-sops-limit time "team/secrets/bomb.yaml"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestAResultOverTheOutputLimitIsThatFilesError(t *testing.T) {
	w := &watch{limits: limits{output: 80, totalOutput: 100}}
	small := fileResult{Objects: []map[string]any{{"k": strings.Repeat("x", 40)}}}
	if err := w.accept(fileResult{Objects: []map[string]any{{"k": strings.Repeat("x", 200)}}}); err == nil || !strings.Contains(err.Error(), "PULUMI_FLEET_RENDER_OUTPUT_MIB") {
		t.Fatalf("a large result: %v", err)
	}
	if err := w.accept(small); err != nil {
		t.Fatal(err)
	}
	if err := w.accept(small); err == nil || !strings.Contains(err.Error(), "PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB") {
		t.Fatalf("past the total: %v", err)
	}
}

// probeSandbox enters the sandbox and tries what decryption never needs: a path, the network, a program.
func probeSandbox() {
	if err := enterSandbox(limits{memory: 256 << 20}); err != nil {
		os.Stdout.WriteString("enter: " + err.Error())
		return
	}
	_, openErr := os.Open("/etc/hostname")
	_, dialErr := net.Dial("tcp", "127.0.0.1:1")
	execErr := exec.Command("/bin/true").Run()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{"open": errString(openErr), "dial": errString(dialErr), "exec": errString(execErr), "env": strings.Join(os.Environ(), ",")})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestTheSandboxRefusesPathsNetworkAndPrograms(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{"FLEET_SOPS_TEST_AS=probe", "SOPS_AGE_KEY=runner-key"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s", out)
	}
	for _, k := range []string{"open", "dial", "exec"} {
		if !strings.Contains(got[k], "operation not permitted") {
			t.Errorf("%s was not refused: %q", k, got[k])
		}
	}
	if got["env"] != "" {
		t.Errorf("the environment was kept: %q", got["env"])
	}
}

func TestAFileOverTheNodeOrKeyBudgetIsRefusedBeforeSOPSReadsIt(t *testing.T) {
	k := newKey(t)
	var wide, many strings.Builder
	wide.WriteString("apiVersion: v1\nkind: Secret\nsops:\n  mac: ENC[x]\ndata:\n")
	for i := 0; i < 20_000; i++ {
		fmt.Fprintf(&wide, "  k%d: v\n", i)
	}
	many.WriteString("sops:\n  mac: ENC[x]\nlist:\n")
	for i := 0; i < 20_000; i++ { // 13 nodes each
		fmt.Fprintf(&many, "  - {a: [1, 2, 3], b: [4, 5, 6], c: x}\n")
	}
	deep := "sops:\n  mac: ENC[x]\ndata: " + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "\n"
	deepJSON := `{"sops": {"mac": "ENC[x]"}, "data": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "}"
	for content, want := range map[string]string{wide.String(): "more than 10000 keys", many.String(): "more than 200000 YAML nodes", deep: "nest more than 512 levels", deepJSON: "nest more than 512 levels"} {
		start := time.Now()
		name := "s.yaml"
		if content == deepJSON {
			name = "s.json"
		}
		r := decryptOne(t, k.Identity, file{Name: name, Content: content})
		if !strings.Contains(r.Error, want) || time.Since(start) > 5*time.Second {
			t.Fatalf("%q after %s, want %q", r.Error, time.Since(start), want)
		}
	}
	// A real Secret of 2,000 keys is decrypted.
	var ok strings.Builder
	ok.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: big\nstringData:\n")
	for i := 0; i < 2_000; i++ {
		fmt.Fprintf(&ok, "  k%d: v%d\n", i, i)
	}
	r := decryptOne(t, k.Identity, file{Name: "ok.yaml", Content: encrypted(t, "ok.yaml", ok.String(), "", k.Recipient)})
	if r.Error != "" || len(r.Objects) != 1 {
		t.Fatalf("%+v", r.Error)
	}
}

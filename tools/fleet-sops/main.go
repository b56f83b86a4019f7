// fleet-sops decrypts SOPS-encrypted manifests of a GitRepo with the age key the operator gave that
// GitRepo (gitRepos[].sopsAgeKey), outside the content sandbox: the sandbox must never see the key,
// and what it renders must never see the decrypted values. SOPS's own libraries
// (github.com/getsops/sops/v3: its stores, data key recovery, AES-GCM tree decryption and MAC check)
// with one key service that knows only the given age identities (keyservice.go).
//
// Usage (a JSON request on stdin, a JSON answer on stdout; an error of one file is that file's):
//
//	fleet-sops decrypt [--sandbox --job-timeout D --memory-mib N --output-mib N --total-output-mib N]
//	                     {"identities": "AGE-SECRET-KEY-1...", "files": [{"name": "secret.yaml", "content": "..."}]}
//	                     -> {"files": {"secret.yaml": {"objects": [{...Secret...}]} | {"error": "..."}}}
//	fleet-sops encrypt   {"recipients": ["age1..."], "encryptedRegex": "^(data|stringData)$", "files": [...]}
//	                     -> {"files": {"secret.yaml": {"content": "..."}}}
//	fleet-sops keygen    -> {"identity": "AGE-SECRET-KEY-1...", "recipient": "age1..."}
//
// decrypt always runs confined and bounded (sandbox.go), its flags those of fleet-render --sandbox.
// encrypt and keygen exist for tests and for operators without the sops binary; only decrypt is
// used by a deployment.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	sopslog "github.com/getsops/sops/v3/logging"
	"github.com/sirupsen/logrus"
)

type file struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

type request struct {
	Identities     string   `json:"identities"`
	Recipients     []string `json:"recipients"`
	EncryptedRegex string   `json:"encryptedRegex"`
	Files          []file   `json:"files"`
}

type fileResult struct {
	Objects []map[string]any `json:"objects,omitempty"`
	Content string           `json:"content,omitempty"`
	Error   string           `json:"error,omitempty"`
}

type response struct {
	Files map[string]fileResult `json:"files"`
}

func main() {
	// SOPS logs each recovered data key at info level: nothing of it is wanted on stderr.
	sopslog.SetLevel(logrus.WarnLevel)
	if len(os.Args) < 2 || (os.Args[1] != "decrypt" && len(os.Args) != 2) {
		fail("usage: fleet-sops decrypt [--job-timeout D --memory-mib N --output-mib N --total-output-mib N] | encrypt | keygen (a JSON request on stdin)")
	}
	var out any
	switch os.Args[1] {
	case "keygen":
		k, err := keygen()
		if err != nil {
			fail(err.Error())
		}
		out = k
	case "decrypt", "encrypt":
		var w *watch
		if os.Args[1] == "decrypt" {
			// Bounded and confined before the request (GitRepo content) is read.
			l, err := parseLimits(os.Args[2:])
			if err != nil {
				fail(err.Error())
			}
			if err := enterSandbox(l); err != nil {
				fail("cannot confine the decryption: " + err.Error())
			}
			w = newWatch(l)
		}
		var req request
		data, err := io.ReadAll(os.Stdin)
		if err == nil {
			err = json.Unmarshal(data, &req)
		}
		if err != nil {
			fail("cannot read the request: " + err.Error())
		}
		if w != nil {
			out = decryptAll(req, w)
		} else {
			out = encryptAll(req)
		}
	default:
		fail("unknown command " + os.Args[1] + " (decrypt, encrypt, keygen)")
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "fleet-sops: "+msg)
	os.Exit(1)
}

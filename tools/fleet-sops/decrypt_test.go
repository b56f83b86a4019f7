package main

import (
	"strings"
	"testing"
)

const secretYAML = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: canary-hunter2\n"

func newKey(t *testing.T) keyPair {
	t.Helper()
	k, err := keygen()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func encrypted(t *testing.T, name, content, regex string, recipients ...string) string {
	t.Helper()
	out, err := encryptFile(file{Name: name, Content: content}, recipients, regex)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "canary-hunter2") {
		t.Fatalf("the encrypted file holds the value in clear:\n%s", out)
	}
	return out
}

func decryptOne(t *testing.T, identities string, f file) fileResult {
	t.Helper()
	res := decryptAll(request{Identities: identities, Files: []file{f}}, nil)
	r, ok := res.Files[f.Name]
	if !ok {
		t.Fatalf("no result for %s", f.Name)
	}
	if strings.Contains(r.Error, "canary-hunter2") {
		t.Fatalf("an error quotes the value: %s", r.Error)
	}
	return r
}

func TestDecryptsASecretWithTheGitRepoKey(t *testing.T) {
	for _, regex := range []string{"", "^(data|stringData)$"} {
		k := newKey(t)
		enc := encrypted(t, "secret.yaml", secretYAML, regex, k.Recipient)
		r := decryptOne(t, k.Identity, file{Name: "secret.yaml", Content: enc})
		if r.Error != "" || len(r.Objects) != 1 {
			t.Fatalf("regex %q: %+v", regex, r)
		}
		obj := r.Objects[0]
		if obj["kind"] != "Secret" || obj["metadata"].(map[string]any)["name"] != "db" || obj["stringData"].(map[string]any)["password"] != "canary-hunter2" {
			t.Fatalf("regex %q: decrypted %v", regex, obj)
		}
		if _, ok := obj["sops"]; ok {
			t.Fatalf("the sops metadata stayed in the object")
		}
	}
}

func TestJSONAndSeveralDocuments(t *testing.T) {
	k := newKey(t)
	js := `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "j"}, "data": {"k": "Y2FuYXJ5LWh1bnRlcjI="}}`
	r := decryptOne(t, k.Identity, file{Name: "s.json", Content: encrypted(t, "s.json", js, "", k.Recipient)})
	if r.Error != "" || r.Objects[0]["data"].(map[string]any)["k"] != "Y2FuYXJ5LWh1bnRlcjI=" {
		t.Fatalf("%+v", r)
	}
	two := secretYAML + "---\n" + strings.Replace(secretYAML, "name: db", "name: db2", 1)
	r = decryptOne(t, k.Identity, file{Name: "two.yml", Content: encrypted(t, "two.yml", two, "", k.Recipient)})
	if r.Error != "" || len(r.Objects) != 2 || r.Objects[1]["metadata"].(map[string]any)["name"] != "db2" {
		t.Fatalf("%+v", r)
	}
}

func TestAnotherKeyFailsNamingTheRecipient(t *testing.T) {
	owner, other := newKey(t), newKey(t)
	enc := encrypted(t, "secret.yaml", secretYAML, "", owner.Recipient)
	r := decryptOne(t, other.Identity, file{Name: "secret.yaml", Content: enc})
	if r.Objects != nil || !strings.Contains(r.Error, owner.Recipient) || !strings.Contains(r.Error, "sopsAgeKey") {
		t.Fatalf("%+v", r)
	}
}

// The runner's own SOPS settings must not open a GitRepo's file: only the identities given are used.
func TestTheRunnersSopsKeyIsNotUsed(t *testing.T) {
	owner, other := newKey(t), newKey(t)
	t.Setenv("SOPS_AGE_KEY", owner.Identity)
	t.Setenv("HOME", t.TempDir())
	enc := encrypted(t, "secret.yaml", secretYAML, "", owner.Recipient)
	if r := decryptOne(t, other.Identity, file{Name: "secret.yaml", Content: enc}); r.Error == "" {
		t.Fatalf("decrypted with the runner's SOPS_AGE_KEY: %+v", r)
	}
	if r := decryptOne(t, "", file{Name: "secret.yaml", Content: enc}); r.Error == "" {
		t.Fatalf("decrypted without a key: %+v", r)
	}
}

func TestATamperedFileFailsItsMAC(t *testing.T) {
	k := newKey(t)
	enc := encrypted(t, "secret.yaml", secretYAML, "^(data|stringData)$", k.Recipient)
	tampered := strings.Replace(enc, "name: db", "name: other", 1)
	if tampered == enc {
		t.Fatal("nothing replaced")
	}
	r := decryptOne(t, k.Identity, file{Name: "secret.yaml", Content: tampered})
	if r.Objects != nil || !strings.Contains(r.Error, "MAC") {
		t.Fatalf("%+v", r)
	}
}

func TestOnlySecretsAreDecrypted(t *testing.T) {
	k := newKey(t)
	cm := strings.Replace(strings.Replace(secretYAML, "kind: Secret", "kind: ConfigMap", 1), "stringData", "data", 1)
	r := decryptOne(t, k.Identity, file{Name: "cm.yaml", Content: encrypted(t, "cm.yaml", cm, "", k.Recipient)})
	if r.Objects != nil || !strings.Contains(r.Error, "ConfigMap") || !strings.Contains(r.Error, "not a v1 Secret") {
		t.Fatalf("%+v", r)
	}
}

func TestBadInput(t *testing.T) {
	k := newKey(t)
	if r := decryptOne(t, k.Identity, file{Name: "plain.yaml", Content: secretYAML}); !strings.Contains(r.Error, "not a SOPS-encrypted file") {
		t.Fatalf("%+v", r)
	}
	if r := decryptOne(t, k.Identity, file{Name: "x.txt", Content: "a"}); !strings.Contains(r.Error, ".yaml") {
		t.Fatalf("%+v", r)
	}
	bad := "AGE-SECRET-KEY-1NOTAKEY-canary-hunter2"
	r := decryptOne(t, bad, file{Name: "s.yaml", Content: encrypted(t, "s.yaml", secretYAML, "", k.Recipient)})
	if !strings.Contains(r.Error, "not an age identity file") || strings.Contains(r.Error, "NOTAKEY") {
		t.Fatalf("%+v", r)
	}
}

package main

import (
	"strings"
	"testing"
)

// What a pair's outputs say reaches the program in clear (its SDK logs each registration's answer at
// debug level): a secret object's values are replaced, and a secret set's messages are withheld.
func TestToldKeepsSecretValuesOutOfTheOutputs(t *testing.T) {
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "app"},
		"stringData": map[string]any{"password": "hunter2-canary"}}
	s := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}})
	s.SecretObjects = map[string]DesiredObject{"/Secret/app/s": {Manifest: secret}}
	st := Status{State: StateErrApplied, Messages: []string{"Secret/app/s: refused, its password is hunter2-canary (aHVudGVyMi1jYW5hcnk=)"}}
	if got := told(st, s).Messages; len(got) != 1 || got[0] != "Secret/app/s: refused, its password is [secret] ([secret])" {
		t.Fatalf("a secret object's value, as written and encoded, is replaced: %q", got)
	}
	lookedUp := spec("m:1", map[string]DesiredObject{"/Service/app/x": {Manifest: configMap("x", nil)}})
	lookedUp.SecretSet = true
	st = Status{State: StateErrApplied, Messages: []string{`Service "x" is invalid: spec.type: Unsupported value: "HUNTER2"`, "another"}}
	got := told(st, lookedUp).Messages
	if len(got) != 1 || strings.Contains(got[0], "HUNTER2") || !strings.HasPrefix(got[0], "2 messages withheld") {
		t.Fatalf("a secret set's messages are withheld, their number kept: %q", got)
	}
	if told(Status{State: StateReady}, lookedUp).Messages != nil {
		t.Fatal("no message, nothing withheld")
	}
}

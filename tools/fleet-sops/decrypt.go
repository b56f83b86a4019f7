package main

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	sops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"

	"filippo.io/age"
)

// decryptAll decrypts each file on its own; w (nil in tests) marks each file for the watchdog and
// bounds its result.
func decryptAll(req request, w *watch) response {
	out := response{Files: map[string]fileResult{}}
	ids, idErr := parseIdentities(req.Identities)
	for _, f := range req.Files {
		if idErr != nil {
			out.Files[f.Name] = fileResult{Error: idErr.Error()}
			continue
		}
		if w != nil {
			w.start(f.Name)
		}
		var r fileResult
		if objects, err := decryptFile(f, ids); err != nil {
			r = fileResult{Error: err.Error()}
		} else {
			r = fileResult{Objects: objects}
		}
		if w != nil {
			if err := w.accept(r); err != nil {
				r = fileResult{Error: err.Error()}
			}
			w.done()
		}
		out.Files[f.Name] = r
	}
	return out
}

// parseIdentities reads an age identity file's text (one AGE-SECRET-KEY-1... per line, # comments).
// Its errors never quote the text: it is the key.
func parseIdentities(text string) (sopsage.ParsedIdentities, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("no age identity given")
	}
	ids, err := age.ParseIdentities(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("the age key is not an age identity file (AGE-SECRET-KEY-1..., one per line)")
	}
	return sopsage.ParsedIdentities(ids), nil
}

// storeFor is SOPS's store for the file's format, by its extension as the sops CLI chooses it.
func storeFor(name string) (sops.Store, error) {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml":
		return sopsyaml.NewStore(&config.YAMLStoreConfig{}), nil
	case ".json":
		return sopsjson.NewStore(&config.JSONStoreConfig{}), nil
	}
	return nil, fmt.Errorf("only .yaml, .yml and .json files are decrypted")
}

// decryptFile decrypts one file as `sops --decrypt` does (data key from the key groups, each value
// with AES-GCM, then the MAC over the decrypted tree checked against the stored one) and returns its
// documents, each of which must be a Secret.
func decryptFile(f file, ids sopsage.ParsedIdentities) (objects []map[string]any, err error) {
	// SOPS's stores have panicked on hostile input (Flux recovers the same way).
	defer func() {
		if r := recover(); r != nil {
			objects, err = nil, fmt.Errorf("is not a valid SOPS file (%v)", r)
		}
	}()
	store, err := storeFor(f.Name)
	if err != nil {
		return nil, err
	}
	if err := checkYAMLBudget([]byte(f.Content)); err != nil {
		return nil, err
	}
	tree, err := store.LoadEncryptedFile([]byte(f.Content))
	if err != nil {
		return nil, fmt.Errorf("is not a SOPS-encrypted file: %v", err)
	}
	recipients := ageRecipients(tree.Metadata)
	if len(recipients) == 0 {
		return nil, fmt.Errorf("is encrypted with no age key (only age keys are supported)")
	}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices(services(ids), nil)
	if err != nil {
		return nil, fmt.Errorf("cannot be decrypted with this GitRepo's age key (sopsAgeKey): it is encrypted for %s", strings.Join(recipients, ", "))
	}
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(dataKey, cipher)
	if err != nil {
		return nil, fmt.Errorf("cannot be decrypted: %v", err)
	}
	stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("has no valid MAC: %v", err)
	}
	if stored != mac {
		return nil, fmt.Errorf("does not match its MAC: it was changed after it was encrypted")
	}
	return secretObjects(tree.Branches)
}

func ageRecipients(m sops.Metadata) []string {
	var out []string
	for _, group := range m.KeyGroups {
		for _, k := range group {
			if a, ok := k.(*sopsage.MasterKey); ok {
				out = append(out, a.Recipient)
			}
		}
	}
	sort.Strings(out)
	return out
}

// secretObjects: each document as JSON, which must be a v1 Secret. A decrypted object of another kind
// would be stored and shown in clear (only Secrets are kept as secrets), so it is refused, and its
// error names the kind, never a value.
func secretObjects(branches sops.TreeBranches) ([]map[string]any, error) {
	store := sopsjson.NewStore(&config.JSONStoreConfig{})
	var out []map[string]any
	for i, b := range branches {
		if len(b) == 0 {
			continue
		}
		data, err := store.EmitPlainFile(sops.TreeBranches{b})
		if err != nil {
			return nil, fmt.Errorf("document %d cannot be read as an object", i+1)
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("document %d is not an object", i+1)
		}
		kind, _ := obj["kind"].(string)
		apiVersion, _ := obj["apiVersion"].(string)
		if kind != "Secret" || apiVersion != "v1" {
			return nil, fmt.Errorf("document %d is %s %s, not a v1 Secret: only Secrets are decrypted, as only they are kept secret in the state and the preview", i+1, describe(apiVersion), describe(kind))
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("holds no document")
	}
	return out, nil
}

// describe quotes a short apiVersion or kind; anything else is not repeated (it could be a value).
func describe(s string) string {
	if s == "" {
		return "(none)"
	}
	if len(s) > 63 || strings.ContainsAny(s, " \n\t\"") {
		return "(unexpected)"
	}
	return s
}

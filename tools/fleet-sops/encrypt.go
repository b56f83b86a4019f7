package main

import (
	"fmt"
	"time"

	sops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keys"
	"github.com/getsops/sops/v3/version"

	"filippo.io/age"
)

type keyPair struct {
	Identity  string `json:"identity"`
	Recipient string `json:"recipient"`
}

func keygen() (keyPair, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{Identity: id.String(), Recipient: id.Recipient().String()}, nil
}

func encryptAll(req request) response {
	out := response{Files: map[string]fileResult{}}
	for _, f := range req.Files {
		content, err := encryptFile(f, req.Recipients, req.EncryptedRegex)
		if err != nil {
			out.Files[f.Name] = fileResult{Error: err.Error()}
		} else {
			out.Files[f.Name] = fileResult{Content: content}
		}
	}
	return out
}

// encryptFile encrypts as `sops --encrypt --age <recipients> [--encrypted-regex R]` does.
func encryptFile(f file, recipients []string, encryptedRegex string) (string, error) {
	store, err := storeFor(f.Name)
	if err != nil {
		return "", err
	}
	branches, err := store.LoadPlainFile([]byte(f.Content))
	if err != nil {
		return "", err
	}
	var group sops.KeyGroup
	for _, r := range recipients {
		k, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			return "", err
		}
		group = append(group, keys.MasterKey(k))
	}
	if len(group) == 0 {
		return "", fmt.Errorf("no age recipient given")
	}
	tree := sops.Tree{Branches: branches, Metadata: sops.Metadata{KeyGroups: []sops.KeyGroup{group}, Version: version.Version, EncryptedRegex: encryptedRegex}}
	if encryptedRegex == "" {
		tree.Metadata.UnencryptedSuffix = "_unencrypted" // the sops CLI's default
	}
	dataKey, errs := tree.GenerateDataKeyWithKeyServices(services(nil))
	if len(errs) > 0 {
		return "", fmt.Errorf("cannot encrypt the data key: %v", errs)
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return "", err
	}
	tree.Metadata.LastModified = time.Now().UTC()
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return "", err
	}
	data, err := store.EmitEncryptedFile(tree)
	return string(data), err
}

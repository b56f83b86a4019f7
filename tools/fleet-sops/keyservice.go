package main

import (
	"context"
	"fmt"

	"github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
)

// ageOnly is the one key service a decryption uses: age keys, with the GitRepo's identities and
// nothing else. SOPS's own local service would also load identities from the runner
// (SOPS_AGE_KEY*, ~/.config/sops/age/keys.txt) and call cloud KMSs with the runner's credentials;
// a GitRepo's file must open with its own key or not at all.
type ageOnly struct {
	identities age.ParsedIdentities
}

var _ keyservice.KeyServiceServer = ageOnly{}

func (s ageOnly) Encrypt(_ context.Context, req *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	k := req.GetKey().GetAgeKey()
	if k == nil {
		return nil, fmt.Errorf("only age keys are supported")
	}
	mk := age.MasterKey{Recipient: k.Recipient}
	if err := mk.Encrypt(req.GetPlaintext()); err != nil {
		return nil, err
	}
	return &keyservice.EncryptResponse{Ciphertext: []byte(mk.EncryptedKey)}, nil
}

func (s ageOnly) Decrypt(_ context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	k := req.GetKey().GetAgeKey()
	if k == nil {
		return nil, fmt.Errorf("not an age key: only age keys are decrypted here")
	}
	if len(s.identities) == 0 {
		return nil, fmt.Errorf("no age identity given")
	}
	mk := age.MasterKey{Recipient: k.Recipient, EncryptedKey: string(req.GetCiphertext())}
	s.identities.ApplyToMasterKey(&mk)
	plain, err := mk.Decrypt()
	if err != nil {
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

func services(identities age.ParsedIdentities) []keyservice.KeyServiceClient {
	return []keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(ageOnly{identities: identities})}
}

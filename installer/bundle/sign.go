package bundle

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// sign signs bundle.json with a PEM private key and returns the signature in base64, as
// bundle.json.sig holds it. bundle.json names the digest of the chart, of the layout's index
// and of every image, so its signature covers every byte of the bundle that verification
// checks. An ed25519 signature is the same on every run; an ECDSA one is not, so a signed
// bundle is byte-identical to another only with an ed25519 key.
func sign(keyPEM, manifest []byte) ([]byte, error) {
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(keyPEM, cryptoutils.SkipPassword)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w; give an unencrypted PEM private key (ECDSA, ed25519 or RSA)", err)
	}
	s, err := signature.LoadSigner(key, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	sig, err := s.SignMessage(bytes.NewReader(manifest))
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", manifestFile, err)
	}
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n"), nil
}

// decodeSignature reads bundle.json.sig.
func decodeSignature(data []byte) ([]byte, error) {
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(sig) == 0 {
		return nil, fmt.Errorf("not a base64 signature")
	}
	return sig, nil
}

// VerifySignature checks the bundle's signature of bundle.json with a PEM public key. An
// unsigned bundle, or one whose signature the key does not verify, is a *VerifyError.
func (b *Bundle) VerifySignature(pubPEM []byte) error {
	v, err := verifier(pubPEM)
	if err != nil {
		return err
	}
	if b.Signature == nil {
		return &VerifyError{Bundle: b.File, Entry: signatureFile, Reason: "the bundle is not signed, and a public key was given: create it with `kruise-addon bundle create --sign-key <private key>`"}
	}
	if err := v.VerifySignature(bytes.NewReader(b.Signature), bytes.NewReader(b.manifestData)); err != nil {
		return &VerifyError{Bundle: b.File, Entry: signatureFile, Reason: fmt.Sprintf("the signature of %s (%s) does not verify with the public key given: %v", manifestFile, b.Digest, err)}
	}
	return nil
}

// CheckPublicKey says whether pubPEM is a public key VerifySignature can use, so that a
// long-running caller (the console server) refuses a bad key when it starts.
func CheckPublicKey(pubPEM []byte) error {
	_, err := verifier(pubPEM)
	return err
}

func verifier(pubPEM []byte) (signature.Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pubPEM)
	if err != nil {
		return nil, fmt.Errorf("public key: %w; give a PEM public key (ECDSA, ed25519 or RSA)", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	return v, nil
}

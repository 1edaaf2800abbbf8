package bundle

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pemKeys is a key pair as PEM, as `openssl genpkey` and `openssl pkey -pubout` write them.
func pemKeys(t *testing.T, priv crypto.Signer) (private, public []byte) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
}

// bundle create --sign-key signs bundle.json with an ed25519, ECDSA or RSA key; the signature
// verifies with that key's public half and with no other, and an unsigned bundle is refused
// when a key is given. An ed25519 signature keeps the bundle byte-identical from run to run.
func TestBundleSignatureVerifiesWithItsKeyOnly(t *testing.T) {
	c := kruiseChart(t)
	dir := testLayout(t, c)
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, otherPub := pemKeys(t, otherKey)
	create := func(key []byte) (string, []byte) {
		var buf bytes.Buffer
		if _, err := Create(context.Background(), CreateOptions{Chart: c, Layout: dir, SignKey: key}, &buf); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "signed.tar")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p, buf.Bytes()
	}
	for name, key := range map[string]crypto.Signer{"ed25519": edKey, "ECDSA P-256": ecKey, "RSA 2048": rsaKey} {
		t.Run(name, func(t *testing.T) {
			priv, pub := pemKeys(t, key)
			p, data := create(priv)
			b, err := Read(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.VerifySignature(pub); err != nil {
				t.Errorf("the signature does not verify with its own key: %v", err)
			}
			var ve *VerifyError
			if err := b.VerifySignature(otherPub); !errors.As(err, &ve) || !strings.Contains(err.Error(), "does not verify with the public key given") {
				t.Errorf("another key: %v, want a *VerifyError saying the signature does not verify", err)
			}
			if _, ok := key.(ed25519.PrivateKey); ok {
				if _, again := create(priv); !bytes.Equal(data, again) {
					t.Errorf("two bundles signed with one ed25519 key differ")
				}
			}
		})
	}
	t.Run("an unsigned bundle is refused when a key is given", func(t *testing.T) {
		p, _ := create(nil)
		b, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		_, pub := pemKeys(t, edKey)
		if err := b.VerifySignature(pub); err == nil || !strings.Contains(err.Error(), "the bundle is not signed") {
			t.Errorf("unsigned bundle with a key: %v", err)
		}
	})
}

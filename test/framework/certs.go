package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the files the apiserver reads and the PEM the clients use.
type pki struct {
	caCertFile, servingCertFile, servingKeyFile string
	saKeyFile, saPubFile                        string
	caPEM, adminCertPEM, adminKeyPEM            []byte
}

// certValidity covers any test run; the certificates die with the work dir.
const certValidity = 24 * time.Hour

// certTemplate is a certificate of that serial number, subject and key usage, valid from now
// for certValidity.
func certTemplate(serial int64, subject pkix.Name, now time.Time, usage x509.KeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      subject,
		NotBefore:    now,
		NotAfter:     now.Add(certValidity),
		KeyUsage:     usage,
	}
}

// newPKI writes a CA, an apiserver serving certificate signed by it, and a service-account key
// pair into dir, and returns an admin client certificate in system:masters. A serving certificate
// from our own CA (rather than the apiserver's self-signed one) lets clients verify TLS.
func newPKI(dir string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	now := time.Now().Add(-time.Minute) // tolerate small clock differences between processes
	caTmpl := certTemplate(1, pkix.Name{CommonName: "kruise-test-ca"}, now, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature)
	caTmpl.BasicConstraintsValid, caTmpl.IsCA = true, true
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create ca certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse ca certificate: %w", err)
	}

	serving := certTemplate(2, pkix.Name{CommonName: "kube-apiserver"}, now, x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment)
	serving.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serving.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	// 10.0.0.1 is the kubernetes Service IP in the service range the apiserver is given.
	serving.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
	servingCert, servingKey, err := signedPair(serving, caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}
	admin := certTemplate(3, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, now, x509.KeyUsageDigitalSignature)
	admin.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	adminCert, adminKey, err := signedPair(admin, caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("create admin certificate: %w", err)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	saKeyPEM, err := keyPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshal service-account public key: %w", err)
	}

	p := &pki{
		caCertFile:      filepath.Join(dir, "ca.crt"),
		servingCertFile: filepath.Join(dir, "apiserver.crt"),
		servingKeyFile:  filepath.Join(dir, "apiserver.key"),
		saKeyFile:       filepath.Join(dir, "sa.key"),
		saPubFile:       filepath.Join(dir, "sa.pub"),
		caPEM:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		adminCertPEM:    adminCert,
		adminKeyPEM:     adminKey,
	}
	for path, data := range map[string][]byte{
		p.caCertFile:      p.caPEM,
		p.servingCertFile: servingCert,
		p.servingKeyFile:  servingKey,
		p.saKeyFile:       saKeyPEM,
		p.saPubFile:       pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", filepath.Base(path), err)
		}
	}
	return p, nil
}

// signedPair creates a key and a certificate for tmpl signed by the CA, both PEM-encoded.
func signedPair(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEMBytes []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign certificate: %w", err)
	}
	k, err := keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), k, nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

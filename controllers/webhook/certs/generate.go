package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sort"
	"time"
)

// Secret keys, as 1.8 names them; tls.crt and tls.key repeat cert.pem and key.pem for tools
// that expect a kubernetes.io/tls layout.
const (
	CACertKey  = "ca-cert.pem"
	CAKeyKey   = "ca-key.pem"
	CertKey    = "cert.pem"
	KeyKey     = "key.pem"
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)

// Backdate is how far before "now" a new certificate becomes valid, so that a peer whose clock
// is a little behind ours accepts it.
const Backdate = time.Hour

// Bundle is the CA and serving key pair, all PEM.
type Bundle struct {
	CACert, CAKey, Cert, Key []byte
}

// SecretData renders b under the Secret's keys.
func (b Bundle) SecretData() map[string][]byte {
	return map[string][]byte{
		CACertKey: b.CACert, CAKeyKey: b.CAKey,
		CertKey: b.Cert, KeyKey: b.Key,
		TLSCertKey: b.Cert, TLSKeyKey: b.Key,
	}
}

// FromSecretData reads a Bundle back from the Secret's data.
func FromSecretData(data map[string][]byte) Bundle {
	return Bundle{CACert: data[CACertKey], CAKey: data[CAKeyKey], Cert: data[CertKey], Key: data[KeyKey]}
}

// Equal reports whether both bundles hold the same bytes.
func (b Bundle) Equal(o Bundle) bool {
	return bytes.Equal(b.CACert, o.CACert) && bytes.Equal(b.CAKey, o.CAKey) &&
		bytes.Equal(b.Cert, o.Cert) && bytes.Equal(b.Key, o.Key)
}

// NewCA makes a self-signed CA valid from now-Backdate for validity.
func NewCA(commonName string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	return issue("CA", "CA", &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-Backdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
}

// NewServing makes a serving certificate for hosts (DNS names or IP addresses), signed by the
// CA, valid from now-Backdate for validity but never past the CA.
func NewServing(caCertPEM, caKeyPEM []byte, hosts []string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("serving certificate needs at least one host")
	}
	ca, caKey, err := parsePair(caCertPEM, caKeyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("read CA: %w", err)
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		NotBefore:   now.Add(-Backdate),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range SortedHosts(hosts) {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return issue("serving", "serving certificate", tmpl, ca, caKey)
}

// issue makes a new key and a serial for tmpl, and signs tmpl with parent and parentKey, or
// with itself when parent is nil. Errors name the key (keyName) or the certificate (certName).
func issue(keyName, certName string, tmpl, parent *x509.Certificate, parentKey any) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate %s key: %w", keyName, err)
	}
	if tmpl.SerialNumber, err = newSerial(); err != nil {
		return nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign %s: %w", certName, err)
	}
	if keyPEM, err = encodeKey(key); err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// NewBundle makes a new CA and a serving certificate for hosts.
func NewBundle(hosts []string, now time.Time, caValidity, validity time.Duration) (Bundle, error) {
	caCert, caKey, err := NewCA("kruise-webhook-ca", now, caValidity)
	if err != nil {
		return Bundle{}, err
	}
	cert, key, err := NewServing(caCert, caKey, hosts, now, validity)
	if err != nil {
		return Bundle{}, err
	}
	return Bundle{CACert: caCert, CAKey: caKey, Cert: cert, Key: key}, nil
}

// ServiceHosts are the names a Service is reached by from inside the cluster.
func ServiceHosts(service, namespace string) []string {
	return []string{
		service,
		service + "." + namespace,
		service + "." + namespace + ".svc",
		service + "." + namespace + ".svc.cluster.local",
	}
}

// SortedHosts returns hosts without duplicates or empty names, sorted.
func SortedHosts(hosts []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, h := range hosts {
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}

// ParseCert decodes the first certificate of a PEM block.
func ParseCert(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	return c, nil
}

// certHosts lists a certificate's DNS and IP names.
func certHosts(c *x509.Certificate) []string {
	hosts := append([]string{}, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	return hosts
}

func parsePair(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	c, err := ParseCert(certPEM)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, nil, errors.New("no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse key: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("key cannot sign")
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(c.PublicKey) {
		return nil, nil, errors.New("key does not match certificate")
	}
	return c, signer, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return n, nil
}

package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// logLines is a logger whose lines the test reads.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// replaceFile puts content at path by a rename, as a Secret volume or a config tool does.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func tokensFile(name, token string) string {
	return fmt.Sprintf("tokens:\n- name: %s\n  token: %s\n  role: read-only\n", name, token)
}

func TestAChangedTokensFileIsReadAtTheNextRequest(t *testing.T) {
	const first, second = "first-token-0123456789", "second-token-0123456789-longer"
	path := writeTemp(t, "tokens.yaml", tokensFile("first", first))
	var logged logLines
	af, err := LoadAccessFile(path, logged.logger())
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, defaultAccess(), nil, func(o *Options) { o.TokensFile = af })
	steps := []struct {
		name string
		// file, when set, replaces the tokens file before the requests.
		file       string
		wantCaller map[string]int
		wantLogged string
	}{
		{"the file as the server started with it", "", map[string]int{first: http.StatusOK, second: http.StatusUnauthorized}, ""},
		{"a new token replaces the old at the next request", tokensFile("second", second),
			map[string]int{first: http.StatusUnauthorized, second: http.StatusOK}, "Changed file reloaded"},
		{"a broken file keeps the previous callers and logs why", "tokens:\n- name: second\n  token: short\n  role: admin\n",
			map[string]int{first: http.StatusUnauthorized, second: http.StatusOK}, "must be at least 16 characters"},
		{"a fixed file is read again", tokensFile("first", first),
			map[string]int{first: http.StatusOK, second: http.StatusUnauthorized}, "Changed file reloaded"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			before := len(logged.String())
			if step.file != "" {
				replaceFile(t, path, step.file)
			}
			for token, want := range step.wantCaller {
				if status, body := f.call(t, nil, "GET", "/v1/clusters", token, nil); status != want {
					t.Errorf("token %s: status %d, want %d: %s", token[:6], status, want, body)
				}
			}
			if got := logged.String()[before:]; !strings.Contains(got, step.wantLogged) {
				t.Errorf("logged %q, want %q", got, step.wantLogged)
			}
		})
	}
}

// servedLeaf is the certificate a new TLS connection to addr is served, verified against roots.
func servedLeaf(t *testing.T, addr string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: answerTimeout}, "tcp", addr, &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func leafOf(t *testing.T, certFile string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAChangedServingCertificateIsServedAtTheNextConnection(t *testing.T) {
	var logged logLines
	s := serveOn(t, true, Limits{}, func(o *Options) { o.Log = logged.logger() })
	if got, want := servedLeaf(t, s.addr, s.roots), leafOf(t, s.certFile); !got.Equal(want) {
		t.Fatalf("served %s, want the started certificate %s", got.SerialNumber, want.SerialNumber)
	}

	newCert, newKey, newRoots := servingCert(t)
	want := leafOf(t, newCert)
	for file, from := range map[string]string{s.certFile: newCert, s.keyFile: newKey} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		replaceFile(t, file, string(data))
	}
	if got := servedLeaf(t, s.addr, newRoots); !got.Equal(want) {
		t.Errorf("after the files changed: served %s, want the new certificate %s", got.SerialNumber, want.SerialNumber)
	}

	replaceFile(t, s.certFile, "not a certificate")
	if got := servedLeaf(t, s.addr, newRoots); !got.Equal(want) {
		t.Errorf("after a broken certificate file: served %s, want the last good one %s", got.SerialNumber, want.SerialNumber)
	}
	if !strings.Contains(logged.String(), "Changed file not reloaded") {
		t.Errorf("the broken file is not logged: %s", logged.String())
	}
}

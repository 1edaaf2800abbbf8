package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeRefusesBadSetupsNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kubeconfig := write("kc", "apiVersion: v1\nkind: Config\n")
	clusters := write("clusters.yaml", "clusters:\n- name: prod\n  kubeconfig: "+kubeconfig+"\n")
	tokens := write("tokens.yaml", "tokens:\n- name: console\n  token: 0123456789abcdef0123\n  role: operator\n")
	cases := map[string]struct {
		args   []string
		wantIn []string
	}{
		"no files and no address":   {[]string{"serve"}, []string{"--config: Required", "--tokens: Required", "--listen: Required"}},
		"TLS without a certificate": {[]string{"serve", "--config", clusters, "--tokens", tokens, "--listen", ":8443"}, []string{"--tls-cert: Required", "--tls-key: Required"}},
		"plain HTTP off loopback":   {[]string{"serve", "--config", clusters, "--tokens", tokens, "--insecure-listen", "0.0.0.0:8080"}, []string{"must be a loopback address"}},
		"a clusters file with an unknown field": {[]string{"serve", "--config", write("bad.yaml", "clusters: []\nserver: https://x\n"), "--tokens", tokens, "--insecure-listen", "127.0.0.1:0"},
			[]string{`unknown field "server"`}},
		"a clusters file with a negative limit": {[]string{"serve", "--config", write("limits.yaml", "clusters:\n- name: prod\n  kubeconfig: "+kubeconfig+"\nlimits:\n  readTimeout: -5s\n"), "--tokens", tokens, "--insecure-listen", "127.0.0.1:0"},
			[]string{"limits.readTimeout", "must be a positive duration"}},
		"a tokens file with a bad role": {[]string{"serve", "--config", clusters, "--tokens", write("t.yaml", "tokens:\n- name: a\n  token: 0123456789abcdef0123\n  role: admin\n"), "--insecure-listen", "127.0.0.1:0"},
			[]string{"tokens[0].role"}},
		"a token review group without a role": {[]string{"serve", "--config", clusters, "--tokens", tokens, "--insecure-listen", "127.0.0.1:0", "--token-review-group", "viewers", "--token-review-group", "ops=admin"},
			[]string{"--token-review-group[0]", "<group>=<role>", "--token-review-group[1].role"}},
		"a bundle key without a bundle directory": {[]string{"serve", "--config", clusters, "--tokens", tokens, "--insecure-listen", "127.0.0.1:0", "--bundle-key", write("pub.pem", "x")},
			[]string{"--bundle-key checks the bundles of --bundle-dir"}},
		"a bundle key that is no public key": {[]string{"serve", "--config", clusters, "--tokens", tokens, "--insecure-listen", "127.0.0.1:0", "--bundle-dir", dir, "--bundle-key", write("notkey.pem", "not a key")},
			[]string{"--bundle-key: public key:"}},
		"a token review cluster without a group": {[]string{"serve", "--config", clusters, "--tokens", tokens, "--insecure-listen", "127.0.0.1:0", "--token-review-kubeconfig", kubeconfig},
			[]string{"--token-review-kubeconfig: Forbidden"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run(context.Background(), tc.args, &out, &errOut); code != ExitInvalid {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitInvalid, errOut.String())
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q: %s", w, errOut.String())
				}
			}
		})
	}
}

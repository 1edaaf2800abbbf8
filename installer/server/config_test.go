package server

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConfigurationsReportEveryProblemNamingTheField(t *testing.T) {
	kc := ""
	cases := []struct {
		name    string
		build   func(t *testing.T) error
		wantErr []string
	}{
		{"a good clusters file builds", func(t *testing.T) error {
			_, err := ClusterConfig{Clusters: []ClusterEntry{{Name: "prod", Kubeconfig: kc}}}.Build(nil)
			return err
		}, nil},
		{"bad names, a duplicate, a missing kubeconfig and the reserved name are all reported", func(t *testing.T) error {
			_, err := ClusterConfig{Clusters: []ClusterEntry{
				{Name: "Prod_1", Kubeconfig: kc}, {Name: "a", Kubeconfig: kc}, {Name: "a", Kubeconfig: "/nowhere"}, {Name: "in-cluster", Kubeconfig: kc}, {Name: "b"},
			}}.Build(nil)
			return err
		}, []string{"clusters[0].name", "clusters[2].name: Duplicate", "clusters[2].kubeconfig", "clusters[3].name", "set inCluster: true instead", "clusters[4].kubeconfig: Required"}},
		{"in-cluster outside a pod is refused", func(t *testing.T) error {
			_, err := ClusterConfig{InCluster: true}.Build(func() error { return errors.New("no service account") })
			return err
		}, []string{"inCluster", "no service account"}},
		{"no cluster at all is refused", func(t *testing.T) error {
			_, err := ClusterConfig{}.Build(nil)
			return err
		}, []string{"at least one cluster"}},
		{"short tokens, unknown roles and duplicates are reported without the token", func(t *testing.T) error {
			_, err := AccessConfig{Tokens: []TokenEntry{{Name: "a", Token: "short", Role: "admin"}, {Name: "a", Token: operatorToken, Role: Operator}},
				ClientCertificates: []CertEntry{{CommonName: "", Role: ReadOnly}}}.Build()
			if err != nil && strings.Contains(err.Error(), "short") {
				t.Errorf("the error shows the token: %v", err)
			}
			return err
		}, []string{"tokens[0].token", "at least 16 characters", `tokens[0].role: Unsupported value: "admin"`, "tokens[1].name: Duplicate", "clientCertificates[0].commonName: Required"}},
		{"negative limits are reported with the clusters' problems", func(t *testing.T) error {
			_, err := ClusterConfig{Clusters: []ClusterEntry{{Name: "Prod", Kubeconfig: kc}},
				Limits: Limits{IdleTimeout: metav1.Duration{Duration: -time.Second}, MaxBodyBytes: -1}}.Build(nil)
			return err
		}, []string{"clusters[0].name", "limits.idleTimeout", "must be a positive duration", "limits.maxBodyBytes"}},
		{"a per-client connection cap above the total is refused", func(t *testing.T) error {
			_, err := ClusterConfig{Clusters: []ClusterEntry{{Name: "prod", Kubeconfig: kc}}, Limits: Limits{MaxConnections: 10, MaxConnectionsPerClient: 20}}.Build(nil)
			return err
		}, []string{"limits.maxConnectionsPerClient", "must not exceed maxConnections (10)"}},
		{"an unknown limit in the file is refused", func(t *testing.T) error {
			_, _, err := LoadConfig(writeTemp(t, "clusters.yaml", "clusters:\n- {name: prod, kubeconfig: "+kc+"}\nlimits:\n  maxConections: 10\n"))
			return err
		}, []string{`unknown field "maxConections"`}},
		{"no one to call is refused", func(t *testing.T) error {
			_, err := AccessConfig{}.Build()
			return err
		}, []string{"at least one token or client certificate"}},
		{"TLS needs a certificate and key", func(t *testing.T) error {
			return ListenOptions{Listen: ":8443"}.Validate()
		}, []string{"--tls-cert: Required", "--tls-key: Required"}},
		{"plain HTTP only on loopback", func(t *testing.T) error {
			return ListenOptions{InsecureListen: "0.0.0.0:8080"}.Validate()
		}, []string{"--insecure-listen", "must be a loopback address"}},
		{"plain HTTP on loopback is allowed", func(t *testing.T) error {
			return ListenOptions{InsecureListen: "127.0.0.1:0"}.Validate()
		}, nil},
		{"client certificates need TLS", func(t *testing.T) error {
			return ListenOptions{InsecureListen: "localhost:8080", ClientCAFile: "ca.pem"}.Validate()
		}, []string{"--client-ca: Forbidden"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kc = writeTemp(t, "kubeconfig", "apiVersion: v1\nkind: Config\n")
			err := tc.build(t)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error with %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

package server

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
)

const (
	operatorToken = "operator-token-0123456789"
	readerToken   = "reader-token-0123456789ab"
)

// validator checks every response of this package's tests; TestMain fails the run when one did
// not match the document.
var validator *servertest.Validator

func TestMain(m *testing.M) {
	var err error
	if validator, err = servertest.New(OpenAPIDocument()); err != nil {
		panic(err)
	}
	code := m.Run()
	if f := validator.Failures(); len(f) > 0 {
		os.Stderr.WriteString("responses that do not match openapi.yaml:\n" + strings.Join(f, "\n") + "\n")
		code = 1
	}
	os.Exit(code)
}

// syncBuffer is an audit log the tests read.
type syncBuffer struct{ servertest.Buffer }

func (s *syncBuffer) records(t *testing.T) []AuditRecord {
	t.Helper()
	var out []AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if line == "" {
			continue
		}
		var r AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// errNoCluster is what the test installer factory answers: these tests have no cluster.
var errNoCluster = errors.New("no cluster in unit tests")

type fixture struct {
	srv   *Server
	ts    *httptest.Server
	audit *syncBuffer
}

// testOptions are the options of a server for cluster "prod", which its installers cannot
// reach, with its audit log.
func testOptions(t *testing.T, access AccessConfig) (Options, *syncBuffer) {
	t.Helper()
	a, err := access.Build()
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := ClusterConfig{Clusters: []ClusterEntry{{Name: "prod", Kubeconfig: writeTemp(t, "kubeconfig", "apiVersion: v1\nkind: Config\n")}}}.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	audit := &syncBuffer{}
	return Options{Clusters: clusters, Access: a, Audit: audit,
		NewInstaller: func(genericclioptions.RESTClientGetter, ...installer.Option) (*installer.Installer, error) {
			return nil, errNoCluster
		},
		// Operation records go to a fake cluster of the test's own.
		KubeClient: fakeRecords(t)}, audit
}

func newFixture(t *testing.T, access AccessConfig, tlsConfig *tls.Config, configure ...func(*Options)) *fixture {
	t.Helper()
	o, audit := testOptions(t, access)
	// These tests call every route without a token, from one address.
	o.Limits = Limits{UnauthenticatedBurst: 1000}
	for _, c := range configure {
		c(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.TLS = tlsConfig
	ts.StartTLS()
	t.Cleanup(func() {
		ts.Close()
		srv.Wait()
	})
	return &fixture{srv: srv, ts: ts, audit: audit}
}

func defaultAccess() AccessConfig {
	return AccessConfig{Tokens: []TokenEntry{
		{Name: "console", Token: operatorToken, Role: Operator},
		{Name: "viewer", Token: readerToken, Role: ReadOnly},
	}}
}

// call makes a request, validated against the document, and returns status and body.
func (f *fixture) call(t *testing.T, client *http.Client, method, path, token string, body any) (int, []byte) {
	t.Helper()
	return f.callWith(t, client, method, path, token, body, nil)
}

// callWith is call with extra request headers.
func (f *fixture) callWith(t *testing.T, client *http.Client, method, path, token string, body any, header map[string]string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(mustJSON(t, body))
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if client == nil {
		client = f.client(nil)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// client trusts the test server and validates every response.
func (f *fixture) client(certs []tls.Certificate) *http.Client {
	tr := f.ts.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = certs
	return &http.Client{Transport: validator.Transport(tr)}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// concrete fills a route pattern's wildcards.
func concrete(pattern string) string {
	r := strings.NewReplacer("{cluster}", "prod", "{version}", "1.2.0", "{id}", "op-unknown")
	return r.Replace(pattern)
}

func TestEveryRouteIsDocumentedAndEveryDocumentedRouteServed(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	var served []string
	for _, r := range f.srv.Routes() {
		served = append(served, r.Method+" "+r.Pattern)
	}
	sort.Strings(served)
	if diff := cmp.Diff(validator.Operations(), served); diff != "" {
		t.Errorf("routes served (+) and documented in openapi.yaml (-) differ:\n%s", diff)
	}
}

func TestEveryRouteRefusesAMissingOrWrongToken(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	for _, r := range f.srv.Routes() {
		if r.Public {
			continue
		}
		for name, token := range map[string]string{"no token": "", "a wrong token": "not-a-token-of-the-file", "a token with one character changed": operatorToken[:len(operatorToken)-1] + "X"} {
			t.Run(r.Method+" "+r.Pattern+" with "+name, func(t *testing.T) {
				status, body := f.call(t, nil, r.Method, concrete(r.Pattern), token, nil)
				if status != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401: %s", status, body)
				}
				var e ErrorBody
				if err := json.Unmarshal(body, &e); err != nil || e.Reason != ReasonUnauthorized {
					t.Fatalf("want an Unauthorized error body, got %s (%v)", body, err)
				}
			})
		}
	}
	// An unknown path is refused the same way, before it is found unknown.
	if status, _ := f.call(t, nil, "GET", "/v1/nothing-here", "", nil); status != http.StatusUnauthorized {
		t.Errorf("unknown path without a token: status %d, want 401", status)
	}
}

func TestAReadOnlyCallerCannotMutateAndIsAudited(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	mutating := 0
	for _, r := range f.srv.Routes() {
		if r.Role != Operator {
			continue
		}
		mutating++
		t.Run(r.Method+" "+r.Pattern, func(t *testing.T) {
			status, body := f.call(t, nil, r.Method, concrete(r.Pattern), readerToken, map[string]any{})
			if status != http.StatusForbidden {
				t.Fatalf("status %d, want 403: %s", status, body)
			}
		})
	}
	if mutating != 5 {
		t.Fatalf("%d operator routes, want install, upgrade, uninstall, unlock and rollback", mutating)
	}
	var got []string
	for _, a := range f.audit.records(t) {
		got = append(got, a.Who+" "+a.Action+" "+a.Cluster+" "+a.Result)
	}
	sort.Strings(got)
	want := []string{"viewer install prod denied", "viewer rollback prod denied", "viewer uninstall prod denied", "viewer unlock prod denied", "viewer upgrade prod denied"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

func TestEveryReadRouteIsOpenToAReadOnlyCaller(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	for _, r := range f.srv.Routes() {
		if r.Role != ReadOnly {
			continue
		}
		t.Run(r.Method+" "+r.Pattern, func(t *testing.T) {
			status, body := f.call(t, nil, r.Method, concrete(r.Pattern), readerToken, nil)
			if status == http.StatusUnauthorized || status == http.StatusForbidden {
				t.Fatalf("status %d: %s", status, body)
			}
		})
	}
}

func TestReadsWithoutACluster(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	cases := []struct {
		name       string
		path       string
		wantStatus int
		wantIn     []string
	}{
		{"versions list every row with this server's version recommended", "/v1/versions", 200, []string{`"recommended": "1.2.0"`, `"installable": "1.2.0"`}},
		{"versions for a cluster version keep only the rows supporting it", "/v1/versions?clusterVersion=v1.28.3", 200, []string{`"cluster": "v1.28"`, `"recommended": "1.1.21"`}},
		{"a bad cluster version is bad input naming it", "/v1/versions?clusterVersion=banana", 400, []string{`"reason": "BadInput"`, `"exitCode": 2`, "banana"}},
		{"an unknown cluster is not found and the known ones are named", "/v1/versions?cluster=staging", 404, []string{`"reason": "NotFound"`, "[prod]"}},
		{"the schema of this server's version is the chart's", "/v1/versions/1.2.0/schema", 200, []string{`"manager"`, `"properties"`}},
		{"another version's schema is not here", "/v1/versions/1.1.42/schema", 404, []string{"carries the chart of add-on 1.2.0 only"}},
		{"presets are small, large and custom with small the default", "/v1/versions/1.2.0/presets", 200, []string{`"preset": "small"`, `"preset": "large"`, `"preset": "custom"`, `"default": "small"`}},
		{"clusters are listed without their kubeconfigs", "/v1/clusters", 200, []string{`"name": "prod"`, `"source": "kubeconfig"`}},
		{"an unknown operation is not found, here or in the cluster's records", "/v1/operations/op-nope", 404, []string{"nor a record of it in any cluster"}},
		{"operations list empty", "/v1/operations", 200, []string{`"operations": []`}},
		{"an unknown path is a JSON 404", "/v2/anything", 404, []string{`"reason": "NotFound"`}},
		{"the document is served as JSON too", "/openapi.json", 200, []string{`"openapi":"3.1.0"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.call(t, nil, "GET", tc.path, readerToken, nil)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tc.wantStatus, body)
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(string(body), w) {
					t.Errorf("body lacks %s:\n%s", w, body)
				}
			}
		})
	}
}

func TestMutatingBadInputIsRefusedBeforeAnythingRuns(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	cases := []struct {
		name   string
		path   string
		body   string
		wantIn string
	}{
		{"a kubeconfig in the body is refused: clusters come from the clusters file only", "/v1/clusters/prod/addon/install", `{"kubeconfig":"apiVersion: v1"}`, `unknown field \"kubeconfig\"`},
		{"a server URL in the body is refused", "/v1/clusters/prod/addon/upgrade", `{"server":"https://evil:6443"}`, `unknown field \"server\"`},
		{"a values file path is refused", "/v1/clusters/prod/addon/install", `{"valueFiles":["/etc/passwd"]}`, `unknown field \"valueFiles\"`},
		{"a bad release name names the field", "/v1/clusters/prod/addon/install", `{"releaseName":"Bad_Name"}`, "releaseName"},
		{"a bad timeout names the field", "/v1/clusters/prod/addon/uninstall", `{"timeout":"soon"}`, "timeout: Invalid value"},
		{"another version than the server's names the one it has", "/v1/clusters/prod/addon/install", `{"version":"1.1.42"}`, `supported values: \"1.2.0\"`},
		{"a bad toleration names its index", "/v1/clusters/prod/addon/install", `{"placement":{"tolerations":["a=b:Sometimes"]}}`, "placement.tolerations[0]"},
		{"unlock takes only the release", "/v1/clusters/prod/addon/unlock", `{"releaseName":"x","deleteCRDs":true}`, `unknown field \"deleteCRDs\"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.call(t, nil, "POST", tc.path, operatorToken, json.RawMessage(tc.body))
			if status != 400 || !strings.Contains(string(body), `"reason": "BadInput"`) || !strings.Contains(string(body), `"exitCode": 2`) {
				t.Fatalf("status %d, want 400 BadInput exit 2: %s", status, body)
			}
			if !strings.Contains(string(body), tc.wantIn) {
				t.Errorf("error lacks %s: %s", tc.wantIn, body)
			}
		})
	}
	for _, a := range f.audit.records(t) {
		if a.Result != "rejected" || a.Who != "console" || a.HTTPStatus != 400 || a.Reason != ReasonBadInput {
			t.Errorf("audit record %+v, want console's call rejected with 400 BadInput", a)
		}
	}
	if n := len(f.audit.records(t)); n != len(cases) {
		t.Errorf("%d audit records, want one per call (%d)", n, len(cases))
	}
}

func TestAnOperationThatCannotReachItsClusterFailsWithTheReasonAudited(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	status, body := f.call(t, nil, "POST", "/v1/clusters/prod/addon/unlock", operatorToken, map[string]any{})
	if status != http.StatusAccepted {
		t.Fatalf("status %d, want 202: %s", status, body)
	}
	var acc OperationResponse
	if err := json.Unmarshal(body, &acc); err != nil {
		t.Fatal(err)
	}
	// The event stream ends with the done event; reading it to the end waits for the operation.
	req, _ := http.NewRequest("GET", f.ts.URL+"/v1/operations/"+acc.Operation.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := f.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(stream), "event: done") || !strings.Contains(string(stream), errNoCluster.Error()) {
		t.Fatalf("stream lacks the done event with the error:\n%s", stream)
	}
	_, body = f.call(t, nil, "GET", "/v1/operations/"+acc.Operation.ID, readerToken, nil)
	var op Operation
	if err := json.Unmarshal(body, &op); err != nil {
		t.Fatal(err)
	}
	if op.State != StateFailed || op.Error == nil || op.Error.Reason != ReasonError || op.Finished == nil {
		t.Errorf("operation %s, want failed with reason Error", body)
	}
	var got []string
	for _, a := range f.audit.records(t) {
		got = append(got, strings.Join([]string{a.Who, a.Action, a.Phase, a.Result, a.Operation}, " "))
	}
	want := []string{"console unlock request accepted " + op.ID, "console unlock finished failed " + op.ID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

func TestClientCertificates(t *testing.T) {
	ca, caKey := newCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	access := AccessConfig{
		Tokens:             []TokenEntry{{Name: "console", Token: operatorToken, Role: Operator}},
		ClientCertificates: []CertEntry{{CommonName: "console-backend", Role: ReadOnly}},
	}
	f := newFixture(t, access, TLSConfig(pool))
	otherCA, otherKey := newCA(t)
	cases := []struct {
		name       string
		cert       tls.Certificate
		method     string
		path       string
		wantStatus int
	}{
		{"a listed certificate reads", clientCert(t, ca, caKey, "console-backend"), "GET", "/v1/clusters", 200},
		{"a listed read-only certificate cannot mutate", clientCert(t, ca, caKey, "console-backend"), "POST", "/v1/clusters/prod/addon/unlock", 403},
		{"a certificate of the CA whose name is not listed is refused", clientCert(t, ca, caKey, "someone-else"), "GET", "/v1/clusters", 401},
		{"a certificate of another CA is refused", clientCert(t, otherCA, otherKey, "console-backend"), "GET", "/v1/clusters", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.ts.URL+tc.path, nil)
			resp, err := f.client([]tls.Certificate{tc.cert}).Do(req)
			if tc.wantStatus == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("status %d, want the TLS handshake refused", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
		})
	}
}

func newCA(t *testing.T) (*x509.Certificate, *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func clientCert(t *testing.T, ca *x509.Certificate, caKey *rsa.PrivateKey, cn string) tls.Certificate {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// failingWriter is an audit log on a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestAnAuditRecordThatCannotBeWrittenIsLogged(t *testing.T) {
	var logged []string
	a := &auditLog{w: failingWriter{}, now: time.Now, log: funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})}
	a.write(AuditRecord{Who: "console", Action: "install", Cluster: "prod", Result: "accepted"})
	if len(logged) != 1 || !strings.Contains(logged[0], "no space left on device") || !strings.Contains(logged[0], `"who"="console"`) {
		t.Errorf("logged %q, want the error with who", logged)
	}
}

package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
)

// startFailingOperation starts an install that fails at once (unit tests have no cluster) and
// returns its ID.
func (f *fixture) startFailingOperation(t *testing.T) string {
	t.Helper()
	status, body := f.call(t, nil, "POST", "/v1/clusters/prod/addon/install", operatorToken, map[string]any{})
	if status != http.StatusAccepted {
		t.Fatalf("install: status %d: %s", status, body)
	}
	return decodeAs[OperationResponse](t, body).Operation.ID
}

func TestTheEventsRouteNegotiatesItsMediaTypeByRFC9110(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	id := f.startFailingOperation(t)
	cases := []struct {
		name   string
		accept []string
		want   string
	}{
		{"no Accept, as a generated client sends, polls as JSON", nil, mediaJSON},
		{"JSON with a charset parameter polls as JSON", []string{"application/json; charset=utf-8"}, mediaJSON},
		{"any type polls as JSON", []string{"*/*"}, mediaJSON},
		{"an Accept naming neither type polls as JSON", []string{"text/html"}, mediaJSON},
		{"the event stream named streams", []string{"text/event-stream"}, mediaEventStream},
		{"the event stream preferred over JSON streams", []string{"application/json;q=0.5, text/event-stream"}, mediaEventStream},
		{"JSON preferred over the event stream polls", []string{"text/event-stream;q=0.4, application/json"}, mediaJSON},
		{"the event stream refused with q=0 polls", []string{"text/event-stream;q=0, */*"}, mediaJSON},
		{"the event stream over text wildcards streams", []string{"text/*;q=0.1, text/event-stream"}, mediaEventStream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", f.ts.URL+"/v1/operations/"+id+"/events", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tc.accept {
				req.Header.Add("Accept", a)
			}
			resp := f.send(t, req, readerToken)
			if got, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); resp.StatusCode != http.StatusOK || got != tc.want {
				t.Errorf("status %d with Content-Type %q, want 200 with %s", resp.StatusCode, got, tc.want)
			}
		})
	}
}

func TestVersionsNoneSupportsAreAnEmptyArrayNotNull(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	status, body := f.call(t, nil, "GET", "/v1/versions?clusterVersion=v1.20.0", readerToken, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"rows": []`) {
		t.Errorf("status %d, want 200 with rows []: %s", status, body)
	}
}

func TestAWrongMethodOnAKnownPathIs405WithAllow(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	cases := []struct {
		name, method, path string
		wantStatus         int
		wantAllow          string
	}{
		{"GET on a POST route is 405 allowing POST", "GET", "/v1/clusters/prod/addon/install", http.StatusMethodNotAllowed, "POST"},
		{"DELETE on a GET route is 405 allowing GET and HEAD", "DELETE", "/v1/operations/op-1", http.StatusMethodNotAllowed, "GET, HEAD"},
		{"POST on the versions is 405 allowing GET and HEAD", "POST", "/v1/versions", http.StatusMethodNotAllowed, "GET, HEAD"},
		{"an unknown path stays 404", "DELETE", "/v2/anything", http.StatusNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.ts.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp := f.send(t, req, operatorToken)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("Allow") != tc.wantAllow {
				t.Errorf("status %d Allow %q, want %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"), tc.wantStatus, tc.wantAllow)
			}
		})
	}
}

// send makes req as the given caller through the validating client, reads the body out (the
// validator checks it) and returns the response for its status and headers.
func (f *fixture) send(t *testing.T, req *http.Request, token string) *http.Response {
	t.Helper()
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp
}

// decodeAs decodes a JSON body into a T.
func decodeAs[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

func TestBadValuesAreRefusedAtTheRequestNamingTheirField(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	cases := []struct {
		name, route string
		values      map[string]any
		wantIn      []string
	}{
		{"preflight checks the values it is given", "preflight",
			map[string]any{"manager": map[string]any{"replicas": "three"}}, []string{"values.manager.replicas", "want integer"}},
		{"install refuses replicas that are not a number", "addon/install",
			map[string]any{"manager": map[string]any{"replicas": "three"}}, []string{"values.manager.replicas"}},
		{"upgrade refuses an image repository with a newline", "addon/upgrade",
			map[string]any{"manager": map[string]any{"image": map[string]any{"repository": "a\nb"}}}, []string{"values.manager.image.repository"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.call(t, nil, "POST", "/v1/clusters/prod/"+tc.route, operatorToken, map[string]any{"values": tc.values})
			e := decodeAs[ErrorBody](t, body)
			if status != http.StatusBadRequest || e.Reason != ReasonBadInput {
				t.Fatalf("status %d reason %s, want 400 BadInput: %s", status, e.Reason, body)
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(e.Error, w) {
					t.Errorf("error lacks %s: %s", w, e.Error)
				}
			}
		})
	}
	if _, body := f.call(t, nil, "GET", "/v1/operations", readerToken, nil); !strings.Contains(string(body), `"operations": []`) {
		t.Errorf("a refused request started an operation: %s", body)
	}
}

func TestMessagesNameAPIFieldsAndRoutesNotCLIFlags(t *testing.T) {
	cases := []struct {
		name, library, want string
	}{
		{"a wait flag becomes the wait field", "add nodes, or install with --wait=false to apply now", "add nodes, or install with wait: false to apply now"},
		{"a spec flag becomes spec.preset", "use --spec large for HA", "use spec.preset: large for HA"},
		{"a command becomes its route", "run `kruise-addon upgrade` (or uninstall) to continue", "run POST /v1/clusters/{cluster}/addon/upgrade (or uninstall) to continue"},
		{"resource flags become spec.resources fields", "lower the requests (--spec custom with --cpu-request and --memory-request)",
			"lower the requests (spec.preset: custom with spec.resources.requestsCPU and spec.resources.requestsMemory)"},
		{"a placement flag becomes its field", "use --zone-mode none", "use placement.zoneMode none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := forConsole(ErrorBody{Error: tc.library, Refused: &installer.RefusedError{Reason: tc.library,
				Preflight: &preflight.Report{Verdicts: []preflight.Verdict{{Message: tc.library, Fix: tc.library}}}}})
			v := got.Refused.Preflight.Verdicts[0]
			if diff := cmp.Diff([]string{tc.want, tc.want, tc.want, tc.want}, []string{got.Error, got.Refused.Reason, v.Message, v.Fix}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotFoundCarriesTheExitCodeTheDocumentSays(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	status, body := f.call(t, nil, "GET", "/v1/clusters/staging/addon", readerToken, nil)
	if e := decodeAs[ErrorBody](t, body); status != http.StatusNotFound || e.Reason != ReasonNotFound || e.ExitCode != installer.ExitError {
		t.Errorf("status %d reason %s exitCode %d, want 404 NotFound with exit %d: %s", status, e.Reason, e.ExitCode, installer.ExitError, body)
	}
}

func TestRequestIDsAreAcceptedOrMadeEchoedAndAudited(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	cases := []struct {
		name, sent string
		wantEcho   bool
	}{
		{"a caller's ID is echoed and audited", "console-7f3a", true},
		{"without one the server makes one", "", false},
		{"an ID unsafe for a log line is replaced", "bad id\twith tab", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.audit.records(t))
			req, err := http.NewRequest("POST", f.ts.URL+"/v1/clusters/prod/addon/uninstall", strings.NewReader(`{"timeout":"never"}`))
			if err != nil {
				t.Fatal(err)
			}
			if tc.sent != "" {
				req.Header.Set(requestIDHeader, tc.sent)
			}
			resp := f.send(t, req, operatorToken)
			got := resp.Header.Get(requestIDHeader)
			if got == "" || (got == tc.sent) != tc.wantEcho {
				t.Errorf("X-Request-ID %q for %q sent, want echoed %t", got, tc.sent, tc.wantEcho)
			}
			records := f.audit.records(t)
			if len(records) != before+1 || records[before].RequestID != got {
				t.Errorf("audit records %+v, want one more with requestID %q", records[before:], got)
			}
		})
	}
}

func TestAConflictWithARunningOperationCarriesRetryAfter(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	defer close(release)
	startBlocked(t, f, release)
	req, err := http.NewRequest("POST", f.ts.URL+"/v1/clusters/prod/addon/upgrade", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp := f.send(t, req, operatorToken)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("Retry-After") != retryAfterConflict {
		t.Errorf("status %d Retry-After %q, want 409 with %s", resp.StatusCode, resp.Header.Get("Retry-After"), retryAfterConflict)
	}
}

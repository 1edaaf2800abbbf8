package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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
			req.Header.Set("Authorization", "Bearer "+readerToken)
			for _, a := range tc.accept {
				req.Header.Add("Accept", a)
			}
			resp, err := f.client(nil).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
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
			req.Header.Set("Authorization", "Bearer "+operatorToken)
			resp, err := f.client(nil).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("Allow") != tc.wantAllow {
				t.Errorf("status %d Allow %q, want %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"), tc.wantStatus, tc.wantAllow)
			}
		})
	}
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

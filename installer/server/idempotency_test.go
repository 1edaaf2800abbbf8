package server

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIdempotencyKeysOnMutatingCalls(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	post := func(t *testing.T, path, key, body string) (*http.Response, []byte) {
		t.Helper()
		status, data := f.callWith(t, nil, "POST", path, operatorToken, rawJSON(body), map[string]string{idempotencyHeader: key})
		return &http.Response{StatusCode: status}, data
	}

	t.Run("the same key and body answer the same operation, started once", func(t *testing.T) {
		first, firstBody := post(t, "/v1/clusters/prod/addon/install", "key-same-body", `{"timeout":"4m"}`)
		again, againBody := post(t, "/v1/clusters/prod/addon/install", "key-same-body", `{"timeout":"4m"}`)
		if first.StatusCode != http.StatusAccepted || again.StatusCode != first.StatusCode {
			t.Fatalf("statuses %d and %d, want 202 twice: %s / %s", first.StatusCode, again.StatusCode, firstBody, againBody)
		}
		if diff := cmp.Diff(string(firstBody), string(againBody)); diff != "" {
			t.Errorf("the retry's body differs from the first's (-first +retry):\n%s", diff)
		}
		id := decodeAs[OperationResponse](t, firstBody).Operation.ID
		var installs []string
		for _, o := range f.srv.ops.list(t.Context(), []string{"prod"}) {
			if o.Action == "install" {
				installs = append(installs, o.ID)
			}
		}
		if diff := cmp.Diff([]string{id}, installs); diff != "" {
			t.Errorf("install operations (-want +got):\n%s", diff)
		}
		var replayed int
		for _, a := range f.audit.records(t) {
			if a.Phase == "request" && a.Operation == id && a.Replayed {
				replayed++
			}
		}
		if replayed != 1 {
			t.Errorf("%d audit lines mark the retry replayed, want 1", replayed)
		}
	})

	t.Run("retries sent at once start one operation and all answer it", func(t *testing.T) {
		const retries = 8
		bodies := make([]string, retries)
		var wg sync.WaitGroup
		for k := range retries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequest("POST", f.ts.URL+"/v1/clusters/prod/addon/unlock", strings.NewReader(`{"namespace":"at-once"}`))
				if err != nil {
					bodies[k] = err.Error()
					return
				}
				req.Header.Set("Authorization", "Bearer "+operatorToken)
				req.Header.Set(idempotencyHeader, "key-at-once")
				resp, err := f.client(nil).Do(req)
				if err != nil {
					bodies[k] = err.Error()
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				bodies[k] = fmt.Sprintf("%d %s %v", resp.StatusCode, body, err)
			}()
		}
		wg.Wait()
		for k := range bodies {
			if !strings.HasPrefix(bodies[k], "202 ") || bodies[k] != bodies[0] {
				t.Fatalf("answer %d is %s, want the same 202 as the first: %s", k, bodies[k], bodies[0])
			}
		}
		var unlocks int
		for _, o := range f.srv.ops.list(t.Context(), []string{"prod"}) {
			if o.Action == "unlock" && o.Namespace == "at-once" {
				unlocks++
			}
		}
		if unlocks != 1 {
			t.Errorf("%d unlock operations started, want 1", unlocks)
		}
	})

	t.Run("the same key with another body is 422 naming the header", func(t *testing.T) {
		if resp, body := post(t, "/v1/clusters/prod/addon/uninstall", "key-other-body", `{"timeout":"4m"}`); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("first call: status %d: %s", resp.StatusCode, body)
		}
		resp, body := post(t, "/v1/clusters/prod/addon/uninstall", "key-other-body", `{"timeout":"5m"}`)
		e := decodeAs[ErrorBody](t, body)
		if resp.StatusCode != http.StatusUnprocessableEntity || e.Reason != ReasonIdempotencyKeyReused || !strings.Contains(e.Error, idempotencyHeader) {
			t.Errorf("status %d body %s, want 422 IdempotencyKeyReused naming %s", resp.StatusCode, body, idempotencyHeader)
		}
	})

	t.Run("a refused call's key is not kept, so its retry is checked anew", func(t *testing.T) {
		resp, body := post(t, "/v1/clusters/prod/addon/rollback", "key-refused", `{"toRevision":-1}`)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
		}
		if resp, body := post(t, "/v1/clusters/prod/addon/rollback", "key-refused", `{"toRevision":1}`); resp.StatusCode != http.StatusAccepted {
			t.Errorf("retry with a corrected body: status %d, want 202: %s", resp.StatusCode, body)
		}
	})

	t.Run("an unusable key is bad input naming the header", func(t *testing.T) {
		resp, body := post(t, "/v1/clusters/prod/addon/unlock", strings.Repeat("k", 256), `{}`)
		if e := decodeAs[ErrorBody](t, body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, idempotencyHeader) {
			t.Errorf("status %d body %s, want 400 naming %s", resp.StatusCode, body, idempotencyHeader)
		}
	})
}

// rawJSON is a request body sent as it is written.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func TestIdempotencyKeysAreKeptForABoundedTimeAndCount(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var fp [sha256.Size]byte
	cases := []struct {
		name string
		// claims are made in order, at t0 plus the offset; each is settled as accepted.
		claims    []time.Duration
		keys      []string
		wantFirst []bool
	}{
		{"a key within its time answers its first call", []time.Duration{0, time.Hour}, []string{"a", "a"}, []bool{true, false}},
		{"a key past its time is forgotten", []time.Duration{0, 3 * time.Hour}, []string{"a", "a"}, []bool{true, true}},
		{"the oldest key is forgotten beyond the count", []time.Duration{0, 1, 2, 3}, []string{"a", "b", "c", "a"}, []bool{true, true, true, true}},
		{"a key within the count is kept", []time.Duration{0, 1, 2}, []string{"a", "b", "a"}, []bool{true, true, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newIdempotency()
			s.ttl, s.max = 2*time.Hour, 2
			var got []bool
			for k, at := range tc.claims {
				e, first := s.claim(idemKey{"console", tc.keys[k]}, fp, t0.Add(at))
				got = append(got, first)
				if first {
					rec := &statusRecorder{ResponseWriter: httptest.NewRecorder(), status: http.StatusAccepted}
					s.settle(e, rec, &bytes.Buffer{})
				}
			}
			if diff := cmp.Diff(tc.wantFirst, got); diff != "" {
				t.Errorf("first calls (-want +got):\n%s", diff)
			}
		})
	}
}

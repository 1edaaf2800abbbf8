package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/installer/server"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
)

const (
	operatorToken = "operator-token-0123456789"
	readerToken   = "reader-token-0123456789ab"
	// installTimeout bounds one operation, waits included, on a busy 2-core machine.
	installTimeout = 3 * time.Minute
)

// testValues name the images' registry (the chart names none) and keep the webhooks out of the
// way: no manager serves them here.
func testValues(extra map[string]any) map[string]any {
	v := map[string]any{"imageRegistry": "registry.example.com",
		"webhookConfiguration": map[string]any{"failurePolicy": map[string]any{"default": "Ignore"}, "timeoutSeconds": 1}}
	for k, e := range extra {
		v[k] = e
	}
	return v
}

func accessConfig() server.AccessConfig {
	return server.AccessConfig{Tokens: []server.TokenEntry{
		{Name: "console", Token: operatorToken, Role: server.Operator},
		{Name: "viewer", Token: readerToken, Role: server.ReadOnly},
	}}
}

// api is a client of one server; every response is validated against the document.
type api struct {
	base   string
	client *http.Client
}

// startServer runs the API in this process over TLS for the test bed's cluster, named "test";
// configure changes its options first.
func startServer(t *testing.T, configure ...func(*server.Options)) (*api, *servertest.Buffer) {
	t.Helper()
	a, err := accessConfig().Build()
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := server.ClusterConfig{Clusters: []server.ClusterEntry{{Name: "test", Kubeconfig: env.Kubeconfig}}}.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	audit := &servertest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	o := server.Options{Clusters: clusters, Access: a, Audit: audit, Context: ctx}
	for _, c := range configure {
		c(&o)
	}
	s, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(s)
	t.Cleanup(func() {
		cancel()
		ts.Close()
		s.Wait()
	})
	return &api{base: ts.URL, client: &http.Client{Transport: validator.Transport(ts.Client().Transport)}}, audit
}

func (c *api) do(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// want decodes a response with the wanted status into v.
func want[T any](t *testing.T, status int, body []byte, wantStatus int) T {
	t.Helper()
	var v T
	if status != wantStatus {
		t.Fatalf("status %d, want %d: %s", status, wantStatus, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// start posts an operation and returns its ID.
func (c *api) start(t *testing.T, action, cluster string, body any) string {
	t.Helper()
	status, data := c.do(t, "POST", "/v1/clusters/"+cluster+"/addon/"+action, operatorToken, body)
	return want[server.OperationResponse](t, status, data, http.StatusAccepted).Operation.ID
}

// events reads the operation's event stream to its end (the done event), at most
// installTimeout.
func (c *api) events(t *testing.T, id string) []server.Event {
	t.Helper()
	return c.eventsAfter(t, id, "")
}

// eventsAfter reads the operation's event stream after the Last-Event-ID lastEventID ("" for
// all) to its end.
func (c *api) eventsAfter(t *testing.T, id, lastEventID string) []server.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/operations/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []server.Event
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e server.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("event stream of %s: %v (events so far: %s)", id, err, describe(out))
	}
	if len(out) == 0 || out[len(out)-1].Type != server.EventDone {
		t.Fatalf("the stream of %s ended without its done event: %s", id, describe(out))
	}
	return out
}

// run starts an operation and follows it to its end; it fails the test unless it succeeded.
func (c *api) run(t *testing.T, action, cluster string, body any) []server.Event {
	t.Helper()
	id := c.start(t, action, cluster, body)
	events := c.events(t, id)
	if done := events[len(events)-1]; done.State != server.StateSucceeded {
		t.Fatalf("%s %s: %s", action, id, describe(events))
	}
	return events
}

func (c *api) addon(t *testing.T, cluster, namespace string) server.AddonResponse {
	t.Helper()
	status, data := c.do(t, "GET", "/v1/clusters/"+cluster+"/addon?namespace="+namespace, readerToken, nil)
	return want[server.AddonResponse](t, status, data, http.StatusOK)
}

func describe(events []server.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "\n  %d %s %s", e.ID, e.Type, e.Component)
		if e.Ready != nil {
			fmt.Fprintf(&b, " %d/%d", *e.Ready, *e.Total)
		}
		fmt.Fprintf(&b, " %s %s", e.State, e.Message)
	}
	return b.String()
}

func codes(issues []server.Issue) []string {
	out := []string{}
	for _, i := range issues {
		out = append(out, i.Code)
	}
	return out
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

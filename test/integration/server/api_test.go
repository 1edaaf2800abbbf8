package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer/server"
)

// A console's whole round on one cluster: preflight, an install followed through its events
// while a second caller is turned away with the running operation's ID, the status with its
// health issues, a read-only caller refused, and an uninstall back to nothing, every mutating
// call in the audit log.
func TestConsoleRound(t *testing.T) {
	c, audit := startServer(t)
	const ns = "kruise-api"

	status, data := c.do(t, "POST", "/v1/clusters/test/preflight", readerToken, map[string]any{"namespace": ns, "values": testValues(nil)})
	pf := want[server.PreflightResponse](t, status, data, http.StatusOK)
	if pf.Refused || len(pf.Report.Verdicts) == 0 {
		t.Fatalf("preflight: refused=%t with %d verdicts, want a report that allows the install: %s", pf.Refused, len(pf.Report.Verdicts), data)
	}

	status, data = c.do(t, "GET", "/v1/versions?cluster=test", readerToken, nil)
	if v := want[server.VersionsResponse](t, status, data, http.StatusOK); v.Recommended != v.Current || v.Cluster == "" {
		t.Errorf("versions for the test cluster: recommended %q for cluster %q, want this build's %q", v.Recommended, v.Cluster, v.Current)
	}

	id := c.start(t, "install", "test", map[string]any{"namespace": ns, "values": testValues(nil)})
	status, data = c.do(t, "POST", "/v1/clusters/test/addon/upgrade", operatorToken, map[string]any{"namespace": ns})
	conflict := want[server.ErrorBody](t, status, data, http.StatusConflict)
	if conflict.Reason != server.ReasonOperationInProgress || conflict.Operation != id {
		t.Errorf("second caller: %s, want OperationInProgress naming %s", data, id)
	}
	// While it runs, status says an operation runs rather than that the release is stuck.
	if a := c.addon(t, "test", ns); a.Operation != "" && a.Operation != id {
		t.Errorf("addon names operation %q while %s runs", a.Operation, id)
	}

	events := c.events(t, id)
	if done := events[len(events)-1]; done.State != server.StateSucceeded {
		t.Fatalf("install: %s", describe(events))
	}
	last := map[string]server.Event{}
	for _, e := range events {
		if e.Type == server.EventProgress {
			last[e.Component] = e
		}
	}
	for _, comp := range []string{"manager", "daemon"} {
		e, ok := last[comp]
		if !ok || *e.Total == 0 || *e.Ready != *e.Total {
			t.Errorf("the last progress of %s is not all ready: %s", comp, describe(events))
		}
	}
	status, data = c.do(t, "GET", "/v1/operations/"+id, readerToken, nil)
	op := want[server.Operation](t, status, data, http.StatusOK)
	res, _ := json.Marshal(op.Result)
	if op.State != server.StateSucceeded || op.Finished == nil || !strings.Contains(string(res), `"revision":1`) {
		t.Errorf("operation: %s", data)
	}

	a := c.addon(t, "test", ns)
	// The simulated manager never patches its CA into the webhooks: that is the one issue.
	if diff := cmp.Diff([]string{server.IssueWebhookUnreachable}, codes(a.Issues)); diff != "" {
		t.Errorf("issues of the installed add-on (-want +got):\n%s\n%+v", diff, a.Issues)
	}
	if a.Healthy || a.Status.State != "deployed" || len(a.Issues) == 0 || len(a.Issues[0].ResourceIDs) == 0 {
		t.Errorf("addon: %+v", a)
	}

	status, data = c.do(t, "POST", "/v1/clusters/test/addon/uninstall", readerToken, map[string]any{"namespace": ns})
	if status != http.StatusForbidden {
		t.Errorf("read-only uninstall: status %d, want 403: %s", status, data)
	}

	c.run(t, "uninstall", "test", map[string]any{"namespace": ns})
	a = c.addon(t, "test", ns)
	if a.Status.State != "absent" || !a.Healthy {
		t.Errorf("after uninstall: state %s healthy %t issues %+v", a.Status.State, a.Healthy, a.Issues)
	}

	var got []string
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var r server.AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		got = append(got, strings.Join([]string{r.Who, r.Action, r.Cluster, r.Namespace, r.Phase, r.Result}, " "))
	}
	wantAudit := []string{
		"console install test kruise-api request accepted",
		"console upgrade test kruise-api request rejected",
		"console install test kruise-api finished succeeded",
		// The body of a caller without the role is never read, so its release is not known.
		"viewer uninstall test  request denied",
		"console uninstall test kruise-api request accepted",
		"console uninstall test kruise-api finished succeeded",
	}
	if diff := cmp.Diff(wantAudit, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

// An install the add-on cannot satisfy is refused by preflight inside its operation, which
// fails with the CLI's reason and exit code, and nothing is installed.
func TestARefusedInstallFailsItsOperationWithTheCLIsClass(t *testing.T) {
	c, _ := startServer(t)
	const ns = "kruise-refused"
	id := c.start(t, "install", "test", map[string]any{"namespace": ns, "values": testValues(nil), "placement": map[string]any{"nodes": []string{"no-such-node"}}})
	events := c.events(t, id)
	done := events[len(events)-1]
	if done.State != server.StateFailed || done.Error == nil || done.Error.Reason != server.ReasonRefused || done.Error.ExitCode != 3 || done.Error.Refused == nil || done.Error.Refused.Preflight == nil {
		t.Fatalf("done event %+v, want failed, Refused, exit 3, with the preflight report", done)
	}
	if a := c.addon(t, "test", ns); a.Status.State != "absent" {
		t.Errorf("state %s after a refused install, want absent", a.Status.State)
	}
}

package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/server"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// buildCLI builds kruise-addon into a temp dir.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kruise-addon")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/kruise-addon/kruise-addon/cmd/kruise-addon").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveProcess runs `kruise-addon serve` as its own process on a loopback port, and waits until
// it answers.
func serveProcess(t *testing.T, bin, clusters, tokens string) (*api, *exec.Cmd) {
	t.Helper()
	ports, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(bin, "serve", "--config", clusters, "--tokens", tokens, "--insecure-listen", addr, "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := &api{base: "http://" + addr, client: &http.Client{Transport: validator.Transport(http.DefaultTransport.(*http.Transport).Clone())}}
	framework.Eventually(t, framework.Long, "the server answers", func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/clusters", nil)
		req.Header.Set("Authorization", "Bearer "+readerToken)
		resp, err := c.client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return framework.Want(resp.StatusCode == http.StatusOK, fmt.Sprintf("status %d", resp.StatusCode))
	})
	return c, cmd
}

// A server killed while Helm waits for an install leaves the release pending-install. The next
// server reads the operation from its record beside the release: interrupted, not running for
// ever, with the events the killed server wrote, resumable from Last-Event-ID, and the unlock
// advice. Its status reports the release stuck (release history, not memory), and once the
// killed server's lock on the cluster has gone stale, unlock through it gives a truthful state
// that upgrade or uninstall continue from.
func TestAnInstallWhoseServerWasKilledIsReadAsInterruptedFromTheClusterAndIsRecoverable(t *testing.T) {
	const ns = "kruise-restart"
	bin := buildCLI(t)
	clusters := writeFile(t, "clusters.yaml", "clusters:\n- name: test\n  kubeconfig: "+env.Kubeconfig+"\n")
	tokens := writeFile(t, "tokens.yaml", fmt.Sprintf("tokens:\n- name: console\n  token: %s\n  role: operator\n- name: viewer\n  token: %s\n  role: read-only\n", operatorToken, readerToken))

	first, proc := serveProcess(t, bin, clusters, tokens)
	// The manager never gets ready, so Helm waits with the release pending-install.
	notReady := testValues(map[string]any{"manager": map[string]any{"podAnnotations": map[string]any{framework.AnnotationNotReady: "true"}}})
	id := first.start(t, "install", "test", map[string]any{"namespace": ns, "values": notReady, "timeout": installTimeout.String()})
	framework.Eventually(t, framework.Long, "the release is pending-install under operation "+id, func(ctx context.Context) error {
		a := first.addon(t, "test", ns)
		return framework.Want(a.Status.State == "pending" && a.Operation == id,
			fmt.Sprintf("state %s, operation %q", a.Status.State, a.Operation))
	})
	if a := first.addon(t, "test", ns); slices.Contains(codes(a.Issues), server.IssueReleaseStuck) {
		t.Errorf("a release its own running operation holds is reported stuck: %+v", a.Issues)
	}
	if err := proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()

	second, _ := serveProcess(t, bin, clusters, tokens)
	// The record goes stale once the killed server stops writing it.
	var op server.Operation
	framework.Eventually(t, framework.Long, "the new server reports operation "+id+" interrupted", func(context.Context) error {
		status, data := second.do(t, "GET", "/v1/operations/"+id, readerToken, nil)
		op = want[server.Operation](t, status, data, http.StatusOK)
		return framework.Want(op.State == server.StateInterrupted, "state "+op.State)
	})
	if op.Error == nil || op.Error.Reason != server.ReasonInterrupted || !strings.Contains(op.Error.Error, "ReleaseStuck") || !strings.Contains(op.Error.Error, "POST unlock") {
		t.Errorf("the interrupted operation's error %+v, want reason Interrupted with the ReleaseStuck and unlock advice", op.Error)
	}
	all := second.eventsAfter(t, id, "")
	if len(all) < 2 || !strings.Contains(all[0].Message, "install of release "+ns+"/kruise-addon on cluster test started") {
		t.Errorf("the new server's events lack the killed server's: %s", describe(all))
	}
	resumed := second.eventsAfter(t, id, "1")
	if diff := cmp.Diff(all[1:], resumed); diff != "" {
		t.Errorf("the stream resumed after event 1 from the new server (-want +got):\n%s", diff)
	}
	if done := resumed[len(resumed)-1]; done.State != server.StateInterrupted {
		t.Errorf("the stream ends %s %s, want a done event of state interrupted", done.Type, done.State)
	}
	cms, err := env.Clientset.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: installer.OperationRecordLabel + "=" + id})
	if err != nil || len(cms.Items) != 1 {
		t.Fatalf("the operation's record in %s: %v %v", ns, cms, err)
	}
	a := second.addon(t, "test", ns)
	if a.Status.State != "pending" || !slices.Contains(codes(a.Issues), server.IssueReleaseStuck) {
		t.Fatalf("after the restart: state %s issues %+v, want pending with ReleaseStuck", a.Status.State, a.Issues)
	}
	// The killed server's lock on the cluster holds until it goes stale (installer.LockDuration
	// after its last renewal): until then a command is refused naming the install in progress.
	// Then upgrade is refused until the release is unlocked: the operation fails with the CLI's
	// class.
	framework.Eventually(t, framework.Long, "upgrade of the stuck release is refused as locked once the killed server's lock went stale", func(context.Context) error {
		events := second.events(t, second.start(t, "upgrade", "test", map[string]any{"namespace": ns}))
		done := events[len(events)-1]
		if e := done.Error; e != nil && e.Refused != nil && e.Refused.InUse != nil {
			return fmt.Errorf("the killed server's lock still holds: %s", e.Error)
		}
		return framework.Want(done.Error != nil && done.Error.Reason == server.ReasonRefused && done.Error.Refused != nil && done.Error.Refused.Locked,
			describe(events)+", want Refused with locked")
	})

	second.run(t, "unlock", "test", map[string]any{"namespace": ns})
	a = second.addon(t, "test", ns)
	if a.Status.State != "failed" || slices.Contains(codes(a.Issues), server.IssueReleaseStuck) || !slices.Contains(codes(a.Issues), server.IssueReleaseFailed) {
		t.Errorf("after unlock: state %s issues %+v, want failed with ReleaseFailed and not ReleaseStuck", a.Status.State, a.Issues)
	}
	second.run(t, "uninstall", "test", map[string]any{"namespace": ns})
	if a = second.addon(t, "test", ns); a.Status.State != "absent" {
		t.Errorf("after uninstall: state %s", a.Status.State)
	}
}

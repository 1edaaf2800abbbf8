package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	kdaemon "github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// healthStatus returns the status code of GET path on the daemon at addr.
func healthStatus(ctx context.Context, addr net.Addr, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr.String()+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// TestDaemonReadyOnlyOnceItsCacheSynced runs a daemon whose ServiceAccount has no rights yet, so
// that its cache cannot list anything: it is live (/healthz, the runtime answers) but not ready
// (/readyz) until the chart's roles are bound to it and its cache has synced.
func TestDaemonReadyOnlyOnceItsCacheSynced(t *testing.T) {
	const sa = "kruise-daemon-late"
	user := fmt.Sprintf("system:serviceaccount:%s:%s", daemonNamespace, sa)
	cfg := rest.CopyConfig(daemonConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	addr, stop, err := startDaemonAs("node-late", ctrd.base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("daemon did not shut down cleanly: %v", err)
		}
	})

	framework.Consistently(t, framework.Poll*30, "live but not ready while its cache cannot list", func(ctx context.Context) error {
		if code, err := healthStatus(ctx, addr, "/healthz"); err != nil || code != 200 {
			return fmt.Errorf("/healthz: %d %v, want 200", code, err)
		}
		if code, err := healthStatus(ctx, addr, "/readyz"); err != nil || code != 503 {
			return fmt.Errorf("/readyz: %d %v, want 503", code, err)
		}
		return nil
	})

	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: daemonNamespace, Name: sa}}
	framework.CreateForTest(t, env.Client, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kruise-daemon-role"}})
	framework.CreateForTest(t, env.Client, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: kdaemon.ConfigNamespace, Name: sa}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kruise-daemon-secret-role"}})
	// The lists are retried with a backoff of up to half a minute once refused.
	framework.Eventually(t, framework.Long, "ready once its cache has synced", func(ctx context.Context) error {
		code, err := healthStatus(ctx, addr, "/readyz")
		if err != nil {
			return err
		}
		return framework.Want(code == 200, fmt.Sprintf("/readyz: %d", code))
	})
}

package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// LeaseHolder is the holder of the managers' leader-election Lease in ns, "" when it has none.
func LeaseHolder(ctx context.Context, c client.Client, ns string) (string, error) {
	l := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manager.LeaseName}, l); err != nil {
		return "", err
	}
	return ptr.Deref(l.Spec.HolderIdentity, ""), nil
}

// WaitNewLeader waits until another manager than old holds the leader-election Lease in ns,
// for at most timeout, and returns its identity.
func WaitNewLeader(t testing.TB, c client.Client, ns, old string, timeout time.Duration) string {
	t.Helper()
	var holder string
	framework.Eventually(t, timeout, "another manager than "+old+" holds the Lease", func(ctx context.Context) error {
		h, err := LeaseHolder(ctx, c, ns)
		if err != nil {
			return err
		}
		if h == "" || h == old {
			return fmt.Errorf("holder %q", h)
		}
		holder = h
		return nil
	})
	return holder
}

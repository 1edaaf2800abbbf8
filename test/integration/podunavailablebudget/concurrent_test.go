package podunavailablebudget

import (
	"context"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestConcurrentDeletionsAdmitNoMoreThanMaxUnavailable: every pod of a budget deleted at once,
// as a drain does; the deletions that arrive together are decided one after another on the
// room the earlier ones left, so no more than maxUnavailable are admitted, each refusal is
// 1.8's 403 naming the podunavailablebudget, and the budget (its total held by
// protect-total-replicas) ends counting the pods that are left.
func TestConcurrentDeletionsAdmitNoMoreThanMaxUnavailable(t *testing.T) {
	const n, maxUnavailable = 12, 4
	ns := framework.NewNamespace(t, env.Client, "pub-concurrent-", nil)
	pods, _ := guardedPods(t, ns, n, maxUnavailable, nil)

	ctx := context.Background()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, name := range pods {
		wg.Go(func() { errs[i] = deletePod(ctx, ns, name) })
	}
	wg.Wait()
	admitted := 0
	for i, err := range errs {
		switch {
		case err == nil:
			admitted++
		case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "podunavailablebudget"):
			t.Fatalf("delete %s: got %v, want success or 403 Forbidden naming the podunavailablebudget", pods[i], err)
		}
	}
	if admitted == 0 || admitted > maxUnavailable {
		t.Fatalf("%d of %d deletions admitted at once, want between 1 and maxUnavailable %d", admitted, n, maxUnavailable)
	}
	kept := int32(n - admitted)
	waitStatus(t, ns, "web", statusNumbers{Total: n, Desired: n - maxUnavailable, Current: kept, Allowed: kept - (n - maxUnavailable)})
}

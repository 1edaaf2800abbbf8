package slowstart

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Bounds of pod creation. They are constants rather than flags: they bound the manager's own
// work, not a user's choice.
const (
	// BatchLimit is the largest batch of pods created at once. Batches start at one pod and
	// double while every create succeeds (1, 2, 4, ... 256), so a quota or admission failure
	// costs one call and not hundreds. It is also the most pods that can still appear after a
	// scale-down or a deletion is seen: the batch already under way.
	BatchLimit = 256
	// MaxPerReconcile is the most pods one reconcile creates. The workload is requeued for the
	// rest once the cache has seen these, so that one workload cannot keep a worker while
	// others wait.
	MaxPerReconcile = 1000
)

// Batches returns the sizes of the batches that create n items: 1, 2, 4, ... doubling up to
// limit. It is pure.
func Batches(n, limit int) []int {
	var out []int
	for size := 1; n > 0; size = min(2*size, limit) {
		b := min(size, n)
		out = append(out, b)
		n -= b
	}
	return out
}

// Stop says why creation planned from the workload planned must stop before its next batch,
// given the workload as the cache shows it now (nil when it is gone), or "" to go on. kind
// names the workload in the reason. Any spec change stops creation, since a new plan is needed;
// the reconcile it triggers makes it.
func Stop(kind string, planned, now metav1.Object) string {
	switch {
	case now == nil || now.GetUID() != planned.GetUID():
		return "the " + kind + " is gone"
	case now.GetDeletionTimestamp() != nil:
		return "the " + kind + " is being deleted"
	case now.GetGeneration() != planned.GetGeneration():
		return "the " + kind + "'s spec changed"
	}
	return ""
}

// Reread is the stop check of Run for a workload: before each batch it reads the workload
// planned from r (the manager's cache) into a copy and asks Stop. kind names it in the reason.
func Reread(r client.Reader, kind string, planned client.Object) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		now := planned.DeepCopyObject().(client.Object)
		if err := r.Get(ctx, client.ObjectKeyFromObject(planned), now); err != nil {
			if !apierrors.IsNotFound(err) {
				return "", fmt.Errorf("read the %s between batches: %w", kind, err)
			}
			return Stop(kind, planned, nil), nil
		}
		return Stop(kind, planned, now), nil
	}
}

// Result is what Run did.
type Result struct {
	// Created is how many items the batches that ran asked for.
	Created int
	// Stopped is why creation stopped early, or "".
	Stopped string
	// More says that items are left for a later reconcile: want was above MaxPerReconcile.
	More bool
}

// Run creates want items, at most MaxPerReconcile of them, in Batches of up to BatchLimit.
// Before each batch after the first it stops, without an error, when ctx is done or stopped
// returns a reason. batch creates the items numbered from to from+size of this reconcile; an
// error from it or from stopped ends the run.
func Run(ctx context.Context, want int, stopped func(context.Context) (string, error), batch func(ctx context.Context, from, size int) error) (Result, error) {
	n := min(want, MaxPerReconcile)
	var res Result
	for _, size := range Batches(n, BatchLimit) {
		if res.Created > 0 {
			if err := ctx.Err(); err != nil {
				res.Stopped = "the reconcile ended: " + err.Error()
				return res, nil
			}
			why, err := stopped(ctx)
			if err != nil {
				return res, err
			}
			if why != "" {
				res.Stopped = why
				return res, nil
			}
		}
		if err := batch(ctx, res.Created, size); err != nil {
			return res, err
		}
		res.Created += size
	}
	res.More = want > n
	return res, nil
}

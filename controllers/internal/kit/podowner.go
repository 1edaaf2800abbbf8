package kit

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
)

// CacheRequeue is how soon a pass that waits for the cache to show its own pod updates looks
// again. One that waits for its creates and deletes looks again when they time out
// (ownedpods.AwaitScaleFor): their events bring it back sooner.
const CacheRequeue = time.Second

// PodOwnerPass is the pass of a workload that owns its pods and keeps revisions, over the scope S
// it reads and the outcome O of its sync: wait until the cache shows the pods it created and
// deleted, read the scope, wait until the cache shows the pods it updated, pre-download images
// (a failure is logged, never blocks), sync, write the status from what the sync did, return the
// sync's error, and then truncate the revision history.
type PodOwnerPass[S, O any] struct {
	Scale   *expectations.Scale
	Updates *expectations.ResourceVersion
	// ForceForgetOverdue is 1.8's ForceDeleteTimeoutExpectationGate: scale expectations that
	// waited past the timeout are forgotten and the pass looks again later instead of acting at
	// once (ownedpods.AwaitScaleFor).
	ForceForgetOverdue bool
	// Read reads the scope of the pass.
	Read func(ctx context.Context) (S, error)
	// Pods are the scope's pods whose updates the cache must show first.
	Pods func(S) []*corev1.Pod
	// PreDownload, when set, pre-pulls the update's images.
	PreDownload func(ctx context.Context, s S) error
	Sync        func(ctx context.Context, s S) (ctrl.Result, O, error)
	WriteStatus func(ctx context.Context, s S, out O, syncErr error) (ctrl.Result, error)
	Truncate    func(ctx context.Context, s S) error
}

// Run runs the pass for the workload whose expectations are kept under key.
func (p PodOwnerPass[S, O]) Run(ctx context.Context, key string) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if wait, after := ownedpods.AwaitScaleFor(log, p.Scale, key, p.ForceForgetOverdue); wait {
		return ctrl.Result{RequeueAfter: after}, nil
	}
	s, err := p.Read(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ownedpods.AwaitUpdates(log, p.Updates, p.Pods(s)) {
		return ctrl.Result{RequeueAfter: CacheRequeue}, nil
	}
	if p.PreDownload != nil {
		if err := p.PreDownload(ctx, s); err != nil {
			log.Error(err, "Image pre-download failed")
		}
	}
	result, out, syncErr := p.Sync(ctx, s)
	stale, err := p.WriteStatus(ctx, s, out, syncErr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if syncErr != nil {
		return ctrl.Result{}, syncErr
	}
	if err := p.Truncate(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	return Sooner(result, stale), nil
}

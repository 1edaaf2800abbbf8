// Package podrefresh moves a workload's pods along at the start of each reconcile: in-place
// updates towards completion (inplaceupdate.Updater.Refresh) and lifecycle states towards
// Normal (lifecycle.Mover). The pods' writes are independent, so they go out concurrently, at
// most ownedpods.MaxParallelWrites at a time: when a batch of in-place updates finishes, its
// pods' InPlaceUpdateReady conditions are written together rather than one after another while
// the workload's reconcile waits.
package podrefresh

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
)

// Refresher refreshes one workload's pods.
type Refresher struct {
	Updater *inplaceupdate.Updater
	Mover   lifecycle.Mover
	// Expect records a pod a lifecycle move or the next batch of an in-place update wrote, for
	// the workload's expectations; it is called concurrently.
	Expect func(*corev1.Pod)
}

// Result is what a refresh found.
type Result struct {
	// Updating holds the UIDs of the pods whose in-place update has not finished.
	Updating map[types.UID]bool
	// RequeueAfter is the soonest time a pod asked to be looked at again (a grace period that
	// runs), 0 when none did.
	RequeueAfter time.Duration
}

// Pods refreshes pods and replaces pods[i] with the pod as written when a lifecycle move wrote
// it. lc is the workload's lifecycle (nil for none); isUpdated tells whether a pod is at the
// update revision. Pods for which skip returns true are left alone; skip may be nil. A pod
// that fails does not stop the others; the errors come back joined, each naming its pod.
func (r Refresher) Pods(ctx context.Context, lc *appspub.Lifecycle, pods []*corev1.Pod, isUpdated func(*corev1.Pod) bool, skip func(*corev1.Pod) bool) (Result, error) {
	type outcome struct {
		updating bool
		requeue  time.Duration
		moved    *corev1.Pod
		err      error
	}
	out := make([]outcome, len(pods))
	ownedpods.Parallel(len(pods), func(i int) {
		pod := pods[i]
		if skip != nil && skip(pod) {
			return
		}
		res, err := r.Updater.Refresh(ctx, pod)
		if err != nil {
			out[i].err = fmt.Errorf("refresh pod %s: %w", pod.Name, err)
			return
		}
		out[i].requeue = res.RequeueAfter
		if res.Written != nil {
			r.Expect(res.Written)
		}
		if res.Updating {
			out[i].updating = true
			return
		}
		next := lifecycle.Next(lifecycle.Observe(lc, pod, isUpdated(pod)), lifecycle.IntentNone).Move
		if next == "" {
			return
		}
		moved, err := r.Mover.Move(ctx, pod, next, false)
		if err != nil {
			out[i].err = err
			return
		}
		r.Expect(moved)
		out[i].moved = moved
	})
	res := Result{Updating: map[types.UID]bool{}}
	var errs []error
	for i, o := range out {
		if o.err != nil {
			errs = append(errs, o.err)
			continue
		}
		if o.requeue > 0 && (res.RequeueAfter == 0 || o.requeue < res.RequeueAfter) {
			res.RequeueAfter = o.requeue
		}
		if o.updating {
			res.Updating[pods[i].UID] = true
		}
		if o.moved != nil {
			pods[i] = o.moved
		}
	}
	return res, errors.Join(errs...)
}

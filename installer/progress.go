package installer

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// progressInterval is how often readiness is polled while Helm waits.
const progressInterval = 2 * time.Second

// readinessLookTimeout bounds the one look at readiness after Helm failed, which may run after
// the command's context ended.
const readinessLookTimeout = 5 * time.Second

// readiness reads the manager Deployment and daemon DaemonSet; absent objects count as 0/0.
func (i *Installer) readiness(ctx context.Context, namespace string) (Readiness, error) {
	var r Readiness
	d, err := i.kube.AppsV1().Deployments(namespace).Get(ctx, "kruise-controller-manager", metav1.GetOptions{})
	switch {
	case err == nil:
		if d.Spec.Replicas != nil {
			r.ManagerDesired = *d.Spec.Replicas
		}
		// Only pods of the current template count, as Helm's wait does.
		r.ManagerReady = min(d.Status.ReadyReplicas, d.Status.UpdatedReplicas)
	case !apierrors.IsNotFound(err):
		return r, fmt.Errorf("get manager deployment: %w", err)
	}
	ds, err := i.kube.AppsV1().DaemonSets(namespace).Get(ctx, "kruise-daemon", metav1.GetOptions{})
	switch {
	case err == nil:
		r.DaemonPresent = true
		r.DaemonDesired = ds.Status.DesiredNumberScheduled
		r.DaemonReady = ds.Status.NumberReady
	case !apierrors.IsNotFound(err):
		return r, fmt.Errorf("get daemon daemonset: %w", err)
	}
	return r, nil
}

// reportProgress prints a readiness line whenever it changes, until ctx ends.
func (i *Installer) reportProgress(ctx context.Context, namespace string) {
	t := i.clock.NewTicker(progressInterval)
	defer t.Stop()
	last := ""
	for {
		if r, err := i.readiness(ctx, namespace); err == nil {
			if s := r.String(); s != last {
				i.report(r)
				last = s
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// report hands r to the readiness receiver, or prints its line.
func (i *Installer) report(r Readiness) {
	if i.onReadiness != nil {
		i.onReadiness(r)
		return
	}
	fmt.Fprintln(i.progress, r.String())
}

// withProgress runs f while reporting progress. With wait > 0 it then waits, up to wait after
// f started, until every replica of the manager and every daemon pod is ready: Helm's own wait
// accepts replicas minus maxUnavailable, which is 0 for a single host-network manager.
func (i *Installer) withProgress(ctx context.Context, namespace string, wait time.Duration, f func() error) error {
	start := i.clock.Now()
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		i.reportProgress(pctx, namespace)
	}()
	err := f()
	if err != nil {
		// Say how far the add-on got: Helm's own error is often only its wait's deadline.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), readinessLookTimeout)
		if r, rerr := i.readiness(rctx, namespace); rerr == nil && !r.allReady() {
			err = fmt.Errorf("%w; the add-on was not ready: %s", err, r)
		}
		rcancel()
	}
	if err == nil && wait > 0 {
		err = i.waitAllReady(ctx, namespace, wait-i.clock.Since(start))
	}
	cancel()
	<-done
	if err == nil {
		if r, rerr := i.readiness(ctx, namespace); rerr == nil {
			i.report(r)
		}
	}
	return err
}

// allReady reports whether the manager has all its replicas ready and the daemon, if rendered,
// all its pods.
func (r Readiness) allReady() bool {
	if r.ManagerDesired > 0 && r.ManagerReady < r.ManagerDesired {
		return false
	}
	return !r.DaemonPresent || r.DaemonReady >= r.DaemonDesired
}

// waitAllReady polls readiness until allReady or until left runs out.
func (i *Installer) waitAllReady(ctx context.Context, namespace string, left time.Duration) error {
	deadline := i.clock.Now().Add(max(left, 0))
	// last is the newest readiness read; a read cut short by the command's own deadline reports
	// it rather than the cut-short request.
	var last Readiness
	for {
		r, err := i.readiness(ctx, namespace)
		if err == nil {
			if r.allReady() {
				return nil
			}
			last = r
		}
		if !i.clock.Now().Before(deadline) {
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("waiting for the add-on to be ready: %w", err)
			}
			return &notReadyError{Readiness: last}
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				// The command's timeout is this wait's timeout too: roll back as at the deadline.
				return &notReadyError{Readiness: last}
			}
			return ctx.Err()
		case <-i.clock.After(progressInterval):
		}
	}
}

// readinessWait is how long to wait for every component after Helm returns: the time left of
// the timeout when the Helm action starts (the wait starts with it), or nothing without Wait.
func readinessWait(o Options, left time.Duration) time.Duration {
	if !o.waits() {
		return 0
	}
	return left
}

// notReadyError is a Helm action that succeeded while the add-on did not become fully ready in
// time.
type notReadyError struct{ Readiness Readiness }

func (e *notReadyError) Error() string {
	return fmt.Sprintf("Helm deployed the release but the add-on was not ready within the timeout: %s", e.Readiness)
}

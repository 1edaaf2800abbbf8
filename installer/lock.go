package installer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// The cluster's lock. The add-on runs once per cluster, and its install, upgrade, uninstall and
// unlock change objects of the whole cluster (CRDs, ClusterRoles, webhook configurations, the
// daemon config namespace), so one of them runs at a time per cluster, whatever namespace and
// release it is for and whichever installer runs it (the CLI, `serve`, a library caller). The
// lock is a Lease in a namespace every cluster has: taken by creating it, or by updating it once
// its holder has not renewed it for LockDuration (a crashed or killed installer); renewed while
// the command runs; deleted when it ends.
const (
	LockNamespace = "kube-system"
	LockName      = "kruise-addon-lock"
	// LockDuration is how long a lock stays held once its holder stops renewing it.
	LockDuration = 15 * time.Second
	// lockRenewEvery leaves a holder two more tries before its lock goes stale.
	lockRenewEvery = LockDuration / 3
	// lockReleaseTimeout bounds the delete of the lock at the end of a command.
	lockReleaseTimeout = 10 * time.Second
	// lockAttempts bounds how often a command retries a lock another took at the same moment.
	lockAttempts = 3

	annotationLockRelease = "kruise-addon.io/release"
	annotationLockCommand = "kruise-addon.io/command"
)

// LockHolder is the command that holds the cluster's lock, as its Lease says.
type LockHolder struct {
	// Identity is the holding installer: host, process and a random suffix.
	Identity  string `json:"identity"`
	Namespace string `json:"namespace"`
	Release   string `json:"release"`
	Command   string `json:"command"`
	// Renewed is when the holder last renewed the lock; it expires LockDuration later unless
	// renewed again.
	Renewed  time.Time     `json:"renewed"`
	Duration time.Duration `json:"duration"`
}

// Expires is when the lock goes stale unless its holder renews it.
func (h LockHolder) Expires() time.Time { return h.Renewed.Add(h.Duration) }

// heldAt reports whether a live holder holds the lock at now.
func (h LockHolder) heldAt(now time.Time) bool {
	return h.Identity != "" && now.Before(h.Expires())
}

// lockHolderOf reads a Lease; a Lease without a holder or renew time is held by nobody.
func lockHolderOf(l *coordinationv1.Lease) LockHolder {
	var h LockHolder
	if l == nil || l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil {
		return h
	}
	h.Identity = *l.Spec.HolderIdentity
	h.Renewed = l.Spec.RenewTime.Time
	if l.Spec.LeaseDurationSeconds != nil {
		h.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	h.Namespace, h.Release, _ = strings.Cut(l.Annotations[annotationLockRelease], "/")
	h.Command = l.Annotations[annotationLockCommand]
	return h
}

// lockFree decides whether identity may take the lock as cur (nil: no Lease) holds it at now:
// when nobody holds it, its holder let it go stale, or identity holds it already. Otherwise
// it returns the holder that refuses it.
func lockFree(cur *coordinationv1.Lease, identity string, now time.Time) (LockHolder, bool) {
	h := lockHolderOf(cur)
	return h, !h.heldAt(now) || h.Identity == identity
}

// lockedReason says who holds the lock, for a command on o's release.
func lockedReason(h LockHolder, o Options) string {
	msg := fmt.Sprintf("%s of release %s/%s by installer %s is in progress: it holds the cluster's lock (Lease %s/%s) until %s unless it renews it",
		h.Command, h.Namespace, h.Release, h.Identity, LockNamespace, LockName, h.Expires().UTC().Format(time.RFC3339))
	if h.Namespace != o.Namespace || h.Release != o.ReleaseName {
		msg += fmt.Sprintf("; the add-on runs once per cluster, so release %s/%s is refused", o.Namespace, o.ReleaseName)
	}
	return msg + "; run the command again once it has ended"
}

// LockLostError ends a command whose lock another installer took over, after this one could not
// renew it for LockDuration, or which was deleted.
type LockLostError struct {
	Holder string `json:"holder,omitempty"`
	Err    error  `json:"-"`
}

func (e *LockLostError) Error() string {
	msg := fmt.Sprintf("lost the cluster's lock (Lease %s/%s)", LockNamespace, LockName)
	if e.Holder != "" {
		msg += " to installer " + e.Holder
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}
func (e *LockLostError) Unwrap() error { return e.Err }

// clusterLock is the cluster's lock as one command holds it.
type clusterLock struct {
	leases coordinationv1client.LeaseInterface
	clock  clock.WithTicker
	// ctx carries the command's values, not its end: the renewals and the release outlive it.
	ctx      context.Context
	identity string
	owner    string // namespace/name of the release the command is for
	command  release.Command

	mu    sync.Mutex
	lease *coordinationv1.Lease // as this command last wrote it

	lost     context.Context
	loseWith context.CancelCauseFunc
	stop     chan struct{}
	done     chan struct{}
}

// lockCluster takes the cluster's lock for cmd on o's release, or refuses with the holder named,
// and renews it until release is called. Register the command's contexts with onLost, so that
// they end if the lock is lost.
func (i *Installer) lockCluster(ctx context.Context, cmd release.Command, o Options) (*clusterLock, error) {
	l := &clusterLock{
		leases: i.kube.CoordinationV1().Leases(LockNamespace), clock: i.clock, ctx: context.WithoutCancel(ctx),
		identity: lockIdentity(), owner: o.Namespace + "/" + o.ReleaseName, command: cmd,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	for attempt := 1; ; attempt++ {
		err := l.take(ctx, o)
		if err == nil {
			break
		}
		// Another installer created or took the Lease between our read and our write: read it
		// again, which then names that installer.
		if attempt < lockAttempts && (apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err)) {
			continue
		}
		if IsRefused(err) {
			return nil, err
		}
		return nil, fmt.Errorf("take the cluster's lock (Lease %s/%s): %w", LockNamespace, LockName, err)
	}
	l.lost, l.loseWith = context.WithCancelCause(l.ctx)
	go l.renewals()
	return l, nil
}

// take creates the Lease, or takes it over when it is free.
func (l *clusterLock) take(ctx context.Context, o Options) error {
	cur, err := l.leases.Get(ctx, LockName, metav1.GetOptions{})
	now := l.clock.Now()
	if apierrors.IsNotFound(err) {
		created, err := l.leases.Create(ctx, l.claim(nil, now), metav1.CreateOptions{FieldManager: FieldManager})
		if err != nil {
			return err
		}
		l.lease = created
		return nil
	}
	if err != nil {
		return err
	}
	if h, free := lockFree(cur, l.identity, now); !free {
		expires := h.Expires()
		return &RefusedError{Reason: lockedReason(h, o), InUse: &InUse{
			Namespace: h.Namespace, Release: h.Release, State: h.Command + " in progress", Holder: h.Identity, Expires: &expires,
		}}
	}
	updated, err := l.leases.Update(ctx, l.claim(cur, now), metav1.UpdateOptions{FieldManager: FieldManager})
	if err != nil {
		return err
	}
	l.lease = updated
	return nil
}

// claim is cur (nil: a new Lease) held by this command from now.
func (l *clusterLock) claim(cur *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	next := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LockName, Namespace: LockNamespace}}
	if cur != nil {
		next = cur.DeepCopy()
		if h := lockHolderOf(cur); h.Identity != "" && h.Identity != l.identity {
			next.Spec.LeaseTransitions = ptr.To(ptr.Deref(cur.Spec.LeaseTransitions, 0) + 1)
		}
	}
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[annotationLockRelease] = l.owner
	next.Annotations[annotationLockCommand] = string(l.command)
	t := metav1.NewMicroTime(now)
	next.Spec.HolderIdentity = ptr.To(l.identity)
	next.Spec.LeaseDurationSeconds = ptr.To(int32(LockDuration / time.Second))
	next.Spec.AcquireTime, next.Spec.RenewTime = &t, &t
	return next
}

// renewals renews the lock every lockRenewEvery until release.
func (l *clusterLock) renewals() {
	defer close(l.done)
	t := l.clock.NewTicker(lockRenewEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C():
			if err := l.renew(); err != nil {
				l.loseWith(err)
				return
			}
		}
	}
}

// renew writes a new renew time. It returns a *LockLostError once the lock is another's, or
// could not be renewed for LockDuration; other failures are retried at the next tick.
func (l *clusterLock) renew() error {
	ctx, cancel := context.WithTimeout(l.ctx, lockRenewEvery)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	next := l.lease.DeepCopy()
	next.Spec.RenewTime = &metav1.MicroTime{Time: now}
	updated, err := l.leases.Update(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		l.lease = updated
		return nil
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		cur, gerr := l.leases.Get(ctx, LockName, metav1.GetOptions{})
		if apierrors.IsNotFound(gerr) {
			return &LockLostError{Err: fmt.Errorf("the Lease was deleted")}
		}
		if gerr == nil {
			if h := lockHolderOf(cur); h.Identity != l.identity {
				return &LockLostError{Holder: h.Identity}
			}
			l.lease = cur
		}
	}
	if last := l.lease.Spec.RenewTime; last != nil && now.Sub(last.Time) >= LockDuration {
		return &LockLostError{Err: fmt.Errorf("not renewed for %s: %w", LockDuration, err)}
	}
	return nil
}

// onLost cancels a command's context with the *LockLostError as its cause if the lock is lost.
// Call the returned function before release.
func (l *clusterLock) onLost(cancel context.CancelCauseFunc) func() {
	stop := context.AfterFunc(l.lost, func() { cancel(context.Cause(l.lost)) })
	return func() { stop() }
}

// release stops the renewals and deletes the Lease, unless another installer has it now. A
// Lease that cannot be deleted goes stale within LockDuration.
func (l *clusterLock) release() {
	close(l.stop)
	<-l.done
	l.loseWith(context.Canceled)
	ctx, cancel := context.WithTimeout(l.ctx, lockReleaseTimeout)
	defer cancel()
	l.mu.Lock()
	uid, rv := l.lease.UID, l.lease.ResourceVersion
	l.mu.Unlock()
	// NotFound and Conflict: gone, or taken over after it went stale; nothing of ours to free.
	_ = l.leases.Delete(ctx, LockName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
}

// lockIdentity names this command's installer: host, process and a random suffix, as two
// commands of one process (serve) hold the lock in turn.
func lockIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/pid-%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

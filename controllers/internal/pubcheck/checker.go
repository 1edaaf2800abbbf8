package pubcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/groupcommit"
)

// conflictRetry bounds the status writes one check makes when other writers keep winning.
// The controller rewrites the status each time a covered pod goes, so under a run of
// deletions conflicts are the rule: the retries start short and back off.
var conflictRetry = wait.Backoff{Steps: 5, Duration: 20 * time.Millisecond, Factor: 2.0, Jitter: 0.1}

// Checker checks pod operations against the budgets that cover the pods. The checks of one
// budget that its callers make at once are decided one after another, each on the status the
// earlier ones left, and written as a group in one status write (controllers/internal/groupcommit);
// writers with other Checkers (the controller, the pod webhook, the workload controllers) are
// kept apart by the resourceVersion each write carries, and retry on conflict.
type Checker struct {
	// Client reads budgets from the cache and writes their status.
	Client client.Client
	// Live reads a budget from the apiserver after a write conflict.
	Live client.Reader
	// Clock stamps the records.
	Clock clock.PassiveClock

	writer *groupcommit.Writer[policyv1alpha1.PodUnavailableBudget, *policyv1alpha1.PodUnavailableBudget]
}

// NewChecker returns a Checker.
func NewChecker(c client.Client, live client.Reader, clk clock.PassiveClock) *Checker {
	return &Checker{Client: c, Live: live, Clock: clk,
		writer: groupcommit.New[policyv1alpha1.PodUnavailableBudget](c, live, conflictRetry)}
}

// Check decides op on pod and, when the pod's budget has room, takes it (unless dryRun). It
// returns allowed=false with the reason when the budget has no room or the status could not be
// written for conflicts; err is for failed reads only.
func (c *Checker) Check(ctx context.Context, pod *corev1.Pod, op policyv1alpha1.PubOperation, dryRun bool) (allowed bool, reason string, err error) {
	if Exempt(pod) || !Available(pod) || RelatedPub(pod) == "" {
		return true, "", nil
	}
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: RelatedPub(pod)}, pub); err != nil {
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "", fmt.Errorf("get podunavailablebudget %s: %w", RelatedPub(pod), err)
	}
	if Needs(pod, pub, op) == Pass {
		return true, "", nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("PodUnavailableBudget", klog.KObj(pub), "Pod", klog.KObj(pod), "operation", op)
	// A dry run takes the room on the group's copy and reports no change, so it is decided
	// after the checks before it and rolled back before the ones after it.
	err = c.writer.Update(ctx, pub, func(cur *policyv1alpha1.PodUnavailableBudget) (bool, error) {
		if err := Take(cur, pod.Name, op, c.Clock.Now()); err != nil {
			return false, err
		}
		return !dryRun, nil
	})
	switch {
	case err == nil:
		log.V(3).Info("Took room from the budget", "dryRun", dryRun)
		return true, "", nil
	case apierrors.IsForbidden(err):
		log.V(2).Info("Refused: the budget has no room", "reason", err.Error())
		return false, err.Error(), nil
	case apierrors.IsConflict(err) || errors.Is(err, wait.ErrWaitTimeout):
		return false, apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodUnavailableBudget %s due to conflicts", pub.Name), 10).Error(), nil
	default:
		return false, "", fmt.Errorf("podunavailablebudget %s: %w", pub.Name, err)
	}
}

// UpdateAllowed is the check a workload controller makes before it updates a pod, in place or
// by recreating it: whether the pod's budget has room, taking that room when it has. A nil
// Checker (PodUnavailableBudgetUpdateGate off) allows every update.
func (c *Checker) UpdateAllowed(ctx context.Context, pod *corev1.Pod) (bool, error) {
	if c == nil {
		return true, nil
	}
	allowed, reason, err := c.Check(ctx, pod, policyv1alpha1.PubUpdateOperation, false)
	if err != nil {
		return false, fmt.Errorf("check the budget of pod %s: %w", pod.Name, err)
	}
	if !allowed {
		ctrl.LoggerFrom(ctx).V(2).Info("Update held by the pod's budget", "Pod", klog.KObj(pod), "reason", reason)
	}
	return allowed, nil
}

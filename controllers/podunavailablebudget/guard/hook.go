package guard

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/pubcheck"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// enabled reports whether either PodUnavailableBudget gate is on; with both off budgets guard
// nothing, as in 1.8.
func enabled(d setup.Deps) bool {
	return d.Gates.Enabled(features.PodUnavailableBudgetDeleteGate) || d.Gates.Enabled(features.PodUnavailableBudgetUpdateGate)
}

// StepFactory builds the /mutate-pod step; nil while both budget gates are off.
func StepFactory(mgr ctrl.Manager, d setup.Deps) podadmission.Step {
	if !enabled(d) {
		return nil
	}
	return &Step{Workloads: pubcheck.Workloads{Client: mgr.GetClient()}}
}

// CheckFactory builds the /validate-pod check; nil while both budget gates are off.
func CheckFactory(mgr ctrl.Manager, d setup.Deps) podadmission.Check {
	if !enabled(d) {
		return nil
	}
	return &Check{
		Checker:      pubcheck.NewChecker(mgr.GetClient(), mgr.GetAPIReader(), d.Clock),
		GuardDeletes: d.Gates.Enabled(features.PodUnavailableBudgetDeleteGate),
		GuardUpdates: d.Gates.Enabled(features.PodUnavailableBudgetUpdateGate),
	}
}

// Step is PodUnavailableBudget's /mutate-pod step.
type Step struct {
	Workloads pubcheck.Workloads
}

// Name names the step.
func (*Step) Name() string { return "podunavailablebudget" }

// Mutate stamps the pod with the name of the budget that covers it. A pod no budget covers
// passes unchanged; so does a pod whose budget cannot be looked up, since the controller
// stamps covered pods later anyway and a failed lookup must not refuse a pod's creation.
func (s *Step) Mutate(ctx context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	pub, err := s.Workloads.PubFor(ctx, pod)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Find the budget of a new pod", "Pod", klog.KObj(pod))
		return false, nil
	}
	if pub == nil || pod.Annotations[policyv1alpha1.PodRelatedPubAnnotation] == pub.Name {
		return false, nil
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[policyv1alpha1.PodRelatedPubAnnotation] = pub.Name
	return true, nil
}

// Check is PodUnavailableBudget's /validate-pod check.
type Check struct {
	Checker *pubcheck.Checker
	// GuardDeletes is PodUnavailableBudgetDeleteGate: deletions and evictions are checked.
	GuardDeletes bool
	// GuardUpdates is PodUnavailableBudgetUpdateGate: updates that may disrupt are checked.
	GuardUpdates bool
}

// Name names the check.
func (*Check) Name() string { return "podunavailablebudget" }

// Covers says which operations the gates ask to check: updates with
// PodUnavailableBudgetUpdateGate, deletions and evictions with PodUnavailableBudgetDeleteGate.
func (c *Check) Covers(op podadmission.Op) bool {
	if op == podadmission.OpUpdate {
		return c.GuardUpdates
	}
	return c.GuardDeletes && (op == podadmission.OpDelete || op == podadmission.OpEvict)
}

// Validate checks a deletion, eviction or disrupting update of a covered pod against its
// budget (see pubcheck.Checker.Check). Pods without the related-pub annotation pass at once.
func (c *Check) Validate(ctx context.Context, a *podadmission.Attempt) (bool, string, error) {
	var op policyv1alpha1.PubOperation
	switch a.Op {
	case podadmission.OpDelete:
		op = policyv1alpha1.PubDeleteOperation
	case podadmission.OpEvict:
		op = policyv1alpha1.PubEvictOperation
	case podadmission.OpUpdate:
		op = policyv1alpha1.PubUpdateOperation
	default:
		return true, "", nil
	}
	// The gates are applied by Covers: the handler asks only about the operations they guard.
	if op == policyv1alpha1.PubUpdateOperation && (pubcheck.RelatedPub(a.NewPod) == "" || !pubcheck.UpdateDisrupts(a.Pod, a.NewPod)) {
		return true, "", nil
	}
	if pubcheck.RelatedPub(a.Pod) == "" {
		return true, "", nil
	}
	return c.Checker.Check(ctx, a.Pod, op, a.DryRun)
}

package placement

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
)

// Check is WorkloadSpread's /validate-pod check.
type Check struct {
	Recorder *Recorder
}

// Name names the check.
func (*Check) Name() string { return "workloadspread" }

// Covers says the check looks at deletions and evictions only.
func (*Check) Covers(op podadmission.Op) bool {
	return op == podadmission.OpDelete || op == podadmission.OpEvict
}

// Validate records a pod being deleted or evicted (the operations Covers admits) in its
// subset's deletingPods, which frees one replica of the subset for the pod that replaces it. It
// never refuses a pod: it allows dry runs, inactive pods, pods without the
// matched-workloadspread annotation and pods whose WorkloadSpread is gone; a status write that
// fails is an error.
func (c *Check) Validate(ctx context.Context, a *podadmission.Attempt) (bool, string, error) {
	if a.DryRun {
		return true, "", nil
	}
	pod := a.Pod
	in, ok, err := spread.InjectedOf(pod)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Ignoring a pod whose WorkloadSpread annotation does not parse", "pod", klog.KObj(pod), "error", err.Error())
		return true, "", nil
	}
	if !ok || !active(pod) || metav1.GetControllerOf(pod) == nil {
		return true, "", nil
	}
	ws := &appsv1alpha1.WorkloadSpread{}
	ws.Namespace, ws.Name = pod.Namespace, in.Name
	cur, err := c.Recorder.read(ctx, ws)
	if err != nil || cur == nil {
		return true, "", err
	}
	err = c.Recorder.update(ctx, cur, func(_ *appsv1alpha1.WorkloadSpread, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error) {
		return spread.RecordDelete(statuses, in.Subset, pod.Name, c.Recorder.now()), nil
	})
	if err != nil {
		return false, "", fmt.Errorf("workloadspread %s: %w", in.Name, err)
	}
	return true, "", nil
}

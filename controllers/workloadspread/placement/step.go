package placement

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
	"github.com/kruise-addon/kruise-addon/features"
)

// Step is WorkloadSpread's /mutate-pod step.
type Step struct {
	Finder   Finder
	Recorder *Recorder
	// NewUID names a pod that has no name yet in creatingPods.
	NewUID func() string
}

// Steps returns the /mutate-pod step and the /validate-pod check sharing one Recorder, so the
// writes of both are serialised per WorkloadSpread; both are nil while the WorkloadSpread gate
// is off.
func Steps() (podadmission.StepFactory, podadmission.CheckFactory) {
	var rec *Recorder
	recorder := func(mgr ctrl.Manager, d setup.Deps) *Recorder {
		if rec == nil {
			rec = NewRecorder(mgr.GetClient(), mgr.GetAPIReader(), d.Clock)
			rec.Config = WhitelistConfig(mgr, d)
		}
		return rec
	}
	step := func(mgr ctrl.Manager, d setup.Deps) podadmission.Step {
		if !d.Gates.Enabled(features.WorkloadSpread) {
			return nil
		}
		f := Finder{Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Config: WhitelistConfig(mgr, d)}
		spreads, err := WatchSpreads(context.Background(), mgr.GetCache())
		if err != nil {
			ctrl.Log.Error(err, "WorkloadSpread placement lists the cache for every pod")
		} else {
			f.Spreads = spreads
		}
		return &Step{Finder: f, Recorder: recorder(mgr, d), NewUID: func() string { return string(uuid.NewUUID()) }}
	}
	check := func(mgr ctrl.Manager, d setup.Deps) podadmission.Check {
		if !d.Gates.Enabled(features.WorkloadSpread) {
			return nil
		}
		return &Check{Recorder: recorder(mgr, d)}
	}
	return step, check
}

// WhitelistConfig reads the custom-workload whitelist from the kruise-configuration ConfigMap
// of the manager's namespace, by name from the apiserver: no ConfigMap is cached.
func WhitelistConfig(mgr ctrl.Manager, d setup.Deps) workloadref.Config {
	return workloadref.Config{Reader: mgr.GetAPIReader(), Namespace: d.ManagerNamespace}
}

// Name names the step.
func (*Step) Name() string { return "workloadspread" }

// Mutate puts a new pod of a WorkloadSpread's target into a subset:
//   - an inactive pod, a pod of no known owner and a pod no WorkloadSpread targets pass as they are;
//   - a StatefulSet's pod takes the subset of its ordinal, with no status write;
//   - a WorkloadSpread of one unlimited subset needs no count and no status write;
//   - otherwise the first subset with room is picked and the pod recorded in its creatingPods
//     (under a generated UID when the pod has no name yet) before the pod is admitted; a dry run
//     picks without recording;
//   - when no subset has room, the pod passes unchanged, as in 1.8.
func (s *Step) Mutate(ctx context.Context, req admission.Request, pod *corev1.Pod) (bool, error) {
	if !active(pod) {
		return false, nil
	}
	ws, err := s.Finder.ForPod(ctx, pod)
	if err != nil || ws == nil {
		return false, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("WorkloadSpread", klog.KObj(ws))
	subset, uid, err := s.pick(ctx, req, ws, pod)
	if err != nil {
		return false, fmt.Errorf("workloadspread %s: %w", ws.Name, err)
	}
	if subset == "" {
		log.V(2).Info("No subset has room for the pod; admitting it without one")
		return false, nil
	}
	for i := range ws.Spec.Subsets {
		if ws.Spec.Subsets[i].Name == subset {
			if err := spread.Inject(pod, ws.Name, &ws.Spec.Subsets[i], uid); err != nil {
				return false, fmt.Errorf("workloadspread %s: %w", ws.Name, err)
			}
			log.V(4).Info("Put the pod into a subset", "subset", subset)
			return true, nil
		}
	}
	return false, nil
}

func (s *Step) pick(ctx context.Context, req admission.Request, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (subset, uid string, err error) {
	if IsStateful(ws) {
		return spread.PickByOrdinal(ws, pod.Name), "", nil
	}
	if len(ws.Spec.Subsets) == 1 && ws.Spec.Subsets[0].MaxReplicas == nil {
		return ws.Spec.Subsets[0].Name, "", nil
	}
	dryRun := req.DryRun != nil && *req.DryRun
	err = s.Recorder.update(ctx, ws, func(cur *appsv1alpha1.WorkloadSpread, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error) {
		subset, uid = "", ""
		if pod.Name != "" {
			if i := spread.Recorded(statuses, pod.Name); i >= 0 {
				subset = statuses[i].Name
				return false, nil
			}
		}
		i := spread.Pick(statuses)
		if i < 0 {
			return false, nil
		}
		subset = statuses[i].Name
		if dryRun {
			return false, nil
		}
		key := pod.Name
		if key == "" {
			uid = s.NewUID()
			key = uid
		}
		return spread.RecordCreate(statuses, i, key, s.Recorder.now()), nil
	})
	return subset, uid, err
}

// active tells whether the pod counts: not being deleted and not finished.
func active(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

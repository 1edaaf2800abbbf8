package restore

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Step is PersistentPodState's /mutate-pod step.
type Step struct {
	// Reader lists PersistentPodStates.
	Reader client.Reader
	// Targets tells the custom workloads whose pods the step serves besides StatefulSets'.
	Targets Targets
}

// StepFactory builds the step.
func StepFactory(mgr ctrl.Manager, d setup.Deps) podadmission.Step {
	return &Step{Reader: mgr.GetClient(), Targets: TargetsFor(mgr, d)}
}

// TargetsFor reads the whitelist from the kruise-configuration ConfigMap of the manager's
// namespace, by name from the apiserver: no ConfigMap is cached.
func TargetsFor(mgr ctrl.Manager, d setup.Deps) Targets {
	return Targets{Config: workloadref.Config{Reader: mgr.GetAPIReader(), Namespace: d.ManagerNamespace}}
}

// Name names the step.
func (*Step) Name() string { return "persistentpodstate" }

// Mutate injects the recorded state of the pod's name, when its StatefulSet, or its whitelisted
// StatefulSet-like workload, has a PersistentPodState that recorded one. The whitelist is read
// only for a pod whose custom workload a PersistentPodState targets.
func (s *Step) Mutate(ctx context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil || pod.Name == "" || !Candidate(owner.APIVersion, owner.Kind) {
		return false, nil
	}
	pps, err := ForWorkload(ctx, s.Reader, pod.Namespace, appsv1alpha1.TargetReference{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name})
	if err != nil || pps == nil {
		return false, err
	}
	if ok, err := s.Targets.Supported(ctx, owner.APIVersion, owner.Kind); err != nil || !ok {
		return false, err
	}
	state, ok := pps.Status.PodStates[pod.Name]
	if !ok {
		return false, nil
	}
	changed := Inject(pod, &pps.Spec, state)
	if changed {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[InjectedAnnotation] = pps.Name
		ctrl.LoggerFrom(ctx).V(2).Info("Injected the recorded state", "PersistentPodState", klog.KObj(pps), "pod", pod.Name, "node", state.NodeName)
	}
	return changed, nil
}

// Inject writes the state recorded for a pod into the pod about to be created and reports
// whether it changed anything:
//   - requiredPersistentTopology's keys with a recorded value go into the nodeSelector;
//   - each preferredPersistentTopology entry with a recorded value of one of its keys becomes
//     a preferred node affinity term of its weight, matching those values;
//   - recorded annotations the pod does not carry are added; the pod's own values win.
func Inject(pod *corev1.Pod, spec *appsv1alpha1.PersistentPodStateSpec, state appsv1alpha1.PodState) bool {
	changed := false
	if req := spec.RequiredPersistentTopology; req != nil {
		for _, key := range req.NodeTopologyKeys {
			value, ok := state.NodeTopologyLabels[key]
			if !ok {
				continue
			}
			if pod.Spec.NodeSelector == nil {
				pod.Spec.NodeSelector = map[string]string{}
			}
			if pod.Spec.NodeSelector[key] != value {
				pod.Spec.NodeSelector[key] = value
				changed = true
			}
		}
	}
	for _, term := range spec.PreferredPersistentTopology {
		pref := corev1.PreferredSchedulingTerm{Weight: term.Weight}
		for _, key := range term.Preference.NodeTopologyKeys {
			if value, ok := state.NodeTopologyLabels[key]; ok {
				pref.Preference.MatchExpressions = append(pref.Preference.MatchExpressions,
					corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}})
			}
		}
		if len(pref.Preference.MatchExpressions) == 0 {
			continue
		}
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		if pod.Spec.Affinity.NodeAffinity == nil {
			pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		na := pod.Spec.Affinity.NodeAffinity
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, pref)
		changed = true
	}
	for _, a := range spec.PersistentPodAnnotations {
		value, ok := state.Annotations[a.Key]
		if !ok {
			continue
		}
		if _, has := pod.Annotations[a.Key]; has {
			continue
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[a.Key] = value
		changed = true
	}
	return changed
}

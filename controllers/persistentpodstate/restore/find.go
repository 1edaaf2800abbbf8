package restore

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
)

// InjectedAnnotation names, on a pod, the PersistentPodState whose state the webhook injected.
const InjectedAnnotation = "kruise.io/injected-persistent-pod-state"

// statefulSets are the kinds a PersistentPodState may target.
var statefulSets = workloadref.KindsOf(workloadref.StatefulSet, workloadref.AdvancedStatefulSet)

// Supported tells whether a PersistentPodState may target apiVersion and kind: a StatefulSet
// of apps or apps.kruise.io.
func Supported(apiVersion, kind string) bool {
	return workloadref.Ref{APIVersion: apiVersion, Kind: kind}.Is(statefulSets)
}

// SameWorkload tells whether two references name the same workload: same group, kind and
// name, whatever the version.
func SameWorkload(a, b appsv1alpha1.TargetReference) bool {
	return workloadref.Same(workloadref.Ref(a), workloadref.Ref(b))
}

// ForWorkload returns the PersistentPodState of namespace that targets ref and is not being
// deleted, or nil.
func ForWorkload(ctx context.Context, r client.Reader, namespace string, ref appsv1alpha1.TargetReference) (*appsv1alpha1.PersistentPodState, error) {
	list := &appsv1alpha1.PersistentPodStateList{}
	if err := r.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list persistentpodstates: %w", err)
	}
	for i := range list.Items {
		pps := &list.Items[i]
		if pps.DeletionTimestamp == nil && SameWorkload(pps.Spec.TargetReference, ref) {
			return pps, nil
		}
	}
	return nil, nil
}

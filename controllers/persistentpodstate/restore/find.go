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
// of apps or apps.kruise.io, or a StatefulSet-like kind custom whitelists.
func Supported(apiVersion, kind string, custom *workloadref.Whitelist) bool {
	ref := workloadref.Ref{APIVersion: apiVersion, Kind: kind}
	if ref.Is(statefulSets) {
		return true
	}
	k, err := ref.GroupKind()
	return err == nil && !workloadref.IsBuiltIn(k) && custom.Lookup(k) != nil
}

// Candidate tells, without the whitelist, whether apiVersion and kind may be a target: a
// StatefulSet or a kind that is not built in (which the whitelist may name).
func Candidate(apiVersion, kind string) bool {
	ref := workloadref.Ref{APIVersion: apiVersion, Kind: kind}
	k, err := ref.GroupKind()
	return err == nil && (ref.Is(statefulSets) || !workloadref.IsBuiltIn(k))
}

// Targets answers Supported with the whitelist of the kruise-configuration ConfigMap's
// PPS_Watch_Custom_Workload_WhiteList key, read on each question about a kind that is not a
// StatefulSet, as 1.8 reads it on each use: a kind added to or removed from it counts at once.
type Targets struct {
	Config workloadref.Config
}

// Custom returns the whitelist when the question about apiVersion and kind needs it, and nil
// for a StatefulSet or a built-in kind, without reading it.
func (t Targets) Custom(ctx context.Context, apiVersion, kind string) (*workloadref.Whitelist, error) {
	ref := workloadref.Ref{APIVersion: apiVersion, Kind: kind}
	if k, err := ref.GroupKind(); err != nil || workloadref.IsBuiltIn(k) {
		return nil, nil
	}
	return t.Config.PersistentPodStateWhitelist(ctx)
}

// Supported tells whether a PersistentPodState may target apiVersion and kind now.
func (t Targets) Supported(ctx context.Context, apiVersion, kind string) (bool, error) {
	custom, err := t.Custom(ctx, apiVersion, kind)
	if err != nil {
		return false, err
	}
	return Supported(apiVersion, kind, custom), nil
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

package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/features"
)

// Pod labels a StatefulSet sets, as the built-in StatefulSet does.
const (
	// PodNameLabel holds the pod's own name, so that a Service can select one pod.
	PodNameLabel = "statefulset.kubernetes.io/pod-name"
	// PodIndexLabel holds the pod's ordinal (the PodIndexLabel gate).
	PodIndexLabel = "apps.kubernetes.io/pod-index"
)

// newPod builds the pod with ordinal o at revision rev.
func (r *Reconciler) newPod(s *scope, rev *appsv1.ControllerRevision, o int) (*corev1.Pod, error) {
	set := s.set
	pod, err := podwrite.NewPod(set, controllerKind, rev)
	if err != nil {
		return nil, err
	}
	name := podName(set.Name, o)
	pod.Name = name
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = rev.Name
	pod.Labels[PodNameLabel] = name
	if r.Gates.Enabled(features.PodIndexLabel) {
		pod.Labels[PodIndexLabel] = strconv.Itoa(o)
	}
	pod.Labels[appspub.LifecycleStateKey] = string(appspub.LifecycleStateNormal)
	pod.Spec.Hostname = name
	pod.Spec.Subdomain = set.Spec.ServiceName
	// Every pod carries the InPlaceUpdateReady gate, so that an in-place update can take it out
	// of Service endpoints whatever the podUpdatePolicy was when it was made.
	inplaceupdate.InjectReadinessGate(pod)

	podwrite.MountClaims(pod, set.Spec.VolumeClaimTemplates, func(t string) string { return claimName(t, set.Name, o) })
	return pod, nil
}

// ensureClaims creates the PVCs of ordinal o that do not exist yet. A claim that exists is
// reused, whichever pod had it before: that is how a recreated pod keeps its volumes.
func (r *Reconciler) ensureClaims(ctx context.Context, s *scope, o int) error {
	set := s.set
	for _, vct := range set.Spec.VolumeClaimTemplates {
		name := claimName(vct.Name, set.Name, o)
		if c, ok := s.claims[name]; ok {
			if c.DeletionTimestamp != nil {
				return fmt.Errorf("persistent volume claim %s is being deleted; pod %s waits for it to go", name, podName(set.Name, o))
			}
			continue
		}
		pvc := podwrite.NewClaim(set.Namespace, name, vct, set.Spec.Selector)
		if ref, ok := claimOwner(r, set); ok {
			pvc.OwnerReferences = []metav1.OwnerReference{ref}
		}
		if err := r.Client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create persistent volume claim %s: %w", name, err)
		}
	}
	return nil
}

// claimOwner is the owner reference the StatefulSet's claims carry: with
// persistentVolumeClaimRetentionPolicy.whenDeleted Delete, the set owns them, so that the
// garbage collector deletes them with it; else they have no owner and outlive it.
func claimOwner(r *Reconciler, set *appsv1beta1.StatefulSet) (metav1.OwnerReference, bool) {
	pol := set.Spec.PersistentVolumeClaimRetentionPolicy
	if pol == nil || pol.WhenDeleted != appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType || !r.Gates.Enabled(features.StatefulSetAutoDeletePVC) {
		return metav1.OwnerReference{}, false
	}
	t := true
	return metav1.OwnerReference{APIVersion: controllerKind.GroupVersion().String(), Kind: controllerKind.Kind, Name: set.Name, UID: set.UID, BlockOwnerDeletion: &t}, true
}

// replicaClaim reports whether a claim of that name belongs to one of the replicas' ordinals
// through one of the volume claim templates.
func (s *scope) replicaClaim(name string) bool {
	for _, vct := range s.set.Spec.VolumeClaimTemplates {
		rest, ok := strings.CutPrefix(name, vct.Name+"-")
		if !ok {
			continue
		}
		if o, ok := ordinalOf(s.set.Name, rest); ok && s.ordinals.Has(o) {
			return true
		}
	}
	return false
}

// ensureClaimOwners makes the claims of the replicas carry the owner reference the retention
// policy asks for: added when whenDeleted is Delete, removed when it is Retain. Claims made before
// the set adopted their pod, or before the policy changed, are brought in line. It goes over the
// claims that exist, never over the replicas' ordinals.
func (r *Reconciler) ensureClaimOwners(ctx context.Context, s *scope) error {
	set := s.set
	want, owned := claimOwner(r, set)
	for _, c := range s.claims {
		if c.DeletionTimestamp != nil || !s.replicaClaim(c.Name) {
			continue
		}
		has := false
		for _, ref := range c.OwnerReferences {
			if ref.UID == set.UID {
				has = true
			}
		}
		if has == owned {
			continue
		}
		var refs []metav1.OwnerReference
		if owned {
			refs = append(append(refs, c.OwnerReferences...), want)
		} else {
			for _, ref := range c.OwnerReferences {
				if ref.UID != set.UID {
					refs = append(refs, ref)
				}
			}
		}
		raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "resourceVersion": c.ResourceVersion}})
		if err != nil {
			return err
		}
		if err := r.Client.Patch(ctx, c.DeepCopy(), client.RawPatch(types.MergePatchType, raw)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("set the owner of persistent volume claim %s: %w", c.Name, err)
		}
	}
	return nil
}

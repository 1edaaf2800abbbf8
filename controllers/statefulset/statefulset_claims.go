package statefulset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// OwnedByAnnotation names, on a PVC the controller resized, the Advanced StatefulSet that did
// it, so that the PVC's later changes (its capacity growing) wake that set.
const OwnedByAnnotation = "apps.kruise.io/owned-by-asts"

// claimState is how one pod's PVCs stand against the volume claim templates, for PVC resizing
// (StatefulSetAutoResizePVCGate with volumeClaimUpdateStrategy OnPodRollingUpdate). Claims that
// are missing or being deleted are left out, as 1.8 does.
type claimState struct {
	// compatible: every claim requests at least the storage its template asks for, and matches
	// it in storage class and access modes.
	compatible bool
	// ready: every claim's status capacity is at least what it requests (smaller than its
	// template or not), and it matches its template in storage class and access modes.
	ready bool
	// completed: every claim is compatible and ready, or compatible with a
	// FileSystemResizePending condition (the file system grows when the pod starts again).
	completed bool
}

// claimMatch compares one claim with its template.
type claimMatch struct {
	// sameShape: storage class (when both name one) and access modes are the template's.
	sameShape bool
	// compatible: sameShape, and the claim requests at least the template's storage.
	compatible bool
	// ready: the claim's capacity is at least what it requests.
	ready bool
	// resizePending: the claim has the FileSystemResizePending condition.
	resizePending bool
}

// matchClaim compares claim with template. It is pure.
func matchClaim(claim, template *corev1.PersistentVolumeClaim) claimMatch {
	var m claimMatch
	tc, cc := template.Spec.StorageClassName, claim.Spec.StorageClassName
	m.sameShape = (tc == nil || cc == nil || *tc == *cc) && equalModes(claim.Spec.AccessModes, template.Spec.AccessModes)
	request := claim.Spec.Resources.Requests.Storage()
	m.compatible = m.sameShape && request.Cmp(*template.Spec.Resources.Requests.Storage()) >= 0
	m.ready = claim.Status.Capacity.Storage().Cmp(*request) >= 0
	for _, c := range claim.Status.Conditions {
		if c.Type == corev1.PersistentVolumeClaimFileSystemResizePending && c.Status == corev1.ConditionTrue {
			m.resizePending = true
		}
	}
	return m
}

func equalModes(a, b []corev1.PersistentVolumeAccessMode) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// claimsOf calls fn with each existing, not terminating, claim of ordinal o and its template.
func (s *scope) claimsOf(o int, fn func(claim, template *corev1.PersistentVolumeClaim)) {
	templates := s.set.Spec.VolumeClaimTemplates
	for i := range templates {
		c, ok := s.claims[claimName(templates[i].Name, s.set.Name, o)]
		if !ok || c.DeletionTimestamp != nil {
			continue
		}
		fn(c, &templates[i])
	}
}

// claimStateOf is how ordinal o's claims stand against the templates.
func (s *scope) claimStateOf(o int) claimState {
	st := claimState{compatible: true, ready: true, completed: true}
	s.claimsOf(o, func(claim, template *corev1.PersistentVolumeClaim) {
		m := matchClaim(claim, template)
		st.compatible = st.compatible && m.compatible
		st.ready = st.ready && m.sameShape && m.ready
		st.completed = st.completed && m.compatible && (m.ready || m.resizePending)
	})
	return st
}

// volumeClaimStatus is status.volumeClaims: for each volume claim template, how many pods'
// claims are compatible with it and how many of those also have the capacity they request.
// 1.8 reports it whether or not PVC resizing is on. It is pure.
func volumeClaimStatus(s *scope) []appsv1beta1.VolumeClaimStatus {
	templates := s.set.Spec.VolumeClaimTemplates
	if len(templates) == 0 {
		return nil
	}
	out := make([]appsv1beta1.VolumeClaimStatus, len(templates))
	index := make(map[string]int, len(templates))
	for i := range templates {
		out[i].VolumeClaimName = templates[i].Name
		index[templates[i].Name] = i
	}
	for _, pod := range s.pods {
		o, _ := ordinalOf(s.set.Name, pod.Name)
		s.claimsOf(o, func(claim, template *corev1.PersistentVolumeClaim) {
			m := matchClaim(claim, template)
			if !m.compatible {
				return
			}
			st := &out[index[template.Name]]
			st.CompatibleReplicas++
			if m.ready {
				st.CompatibleReadyReplicas++
			}
		})
	}
	return out
}

// resizeClaims grows the claims of pod that request less storage than their templates to the
// templates' resources, as 1.8 does: a claim that differs from its template in more than size
// is left for the user to delete (FailedUpdatePVC), and a claim whose StorageClass does not
// allow volume expansion is not patched; both are errors that hold the rolling update.
func (r *Reconciler) resizeClaims(ctx context.Context, s *scope, pod *corev1.Pod) error {
	set := s.set
	o, _ := ordinalOf(set.Name, pod.Name)
	var firstErr error
	s.claimsOf(o, func(claim, template *corev1.PersistentVolumeClaim) {
		if firstErr != nil {
			return
		}
		m := matchClaim(claim, template)
		switch {
		case m.compatible:
			return
		case !m.sameShape:
			r.event(set, corev1.EventTypeWarning, "FailedUpdatePVC", "failed to update pvc %s: contains diff other than spec resource, wait pvc to be deleted", claim.Name)
			firstErr = fmt.Errorf("persistent volume claim %s differs from volumeClaimTemplates %s in more than its size: delete it to have it made again", claim.Name, template.Name)
			return
		}
		if err := r.checkExpansion(ctx, claim, pod); err != nil {
			firstErr = err
			return
		}
		resized := claim.DeepCopy()
		if resized.Annotations == nil {
			resized.Annotations = map[string]string{}
		}
		resized.Annotations[OwnedByAnnotation] = set.Name
		resized.Spec.Resources = template.Spec.Resources
		err := r.Client.Update(ctx, resized)
		if err != nil {
			r.event(set, corev1.EventTypeWarning, "FailedResize", "resize Claim %s for Pod %s in StatefulSet %s failed error: %s", claim.Name, pod.Name, set.Name, err)
			firstErr = fmt.Errorf("resize persistent volume claim %s: %w", claim.Name, err)
			return
		}
		r.event(set, corev1.EventTypeNormal, "SuccessfulResize", "resize Claim %s Pod %s in StatefulSet %s success", claim.Name, pod.Name, set.Name)
	})
	return firstErr
}

// checkExpansion refuses to grow a claim whose StorageClass does not allow volume expansion. A
// claim that names no class is grown: the cluster's default class decides.
func (r *Reconciler) checkExpansion(ctx context.Context, claim *corev1.PersistentVolumeClaim, pod *corev1.Pod) error {
	if claim.Spec.StorageClassName == nil {
		return nil
	}
	name := *claim.Spec.StorageClassName
	var sc storagev1.StorageClass
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &sc); err != nil {
		return fmt.Errorf("get storage class %s of persistent volume claim %s for pod %s: %w", name, claim.Name, pod.Name, err)
	}
	if sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		return fmt.Errorf("storage class %s of persistent volume claim %s for pod %s does not allow volume expansion: set allowVolumeExpansion on it, or use volumeClaimUpdateStrategy OnDelete", name, claim.Name, pod.Name)
	}
	return nil
}

// claimOwners maps a PVC to the StatefulSets whose status.volumeClaims count it: the one its
// OwnedByAnnotation names (1.8's way back from a resized claim), else those of its namespace
// that would name one of their claims as it is named, <template>-<set>-<ordinal>.
func (r *Reconciler) claimOwners(ctx context.Context, obj client.Object) []reconcile.Request {
	if name := obj.GetAnnotations()[OwnedByAnnotation]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
	var sets appsv1beta1.StatefulSetList
	if err := r.Client.List(ctx, &sets, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List StatefulSets for a persistent volume claim", "PersistentVolumeClaim", klog.KObj(obj))
		return nil
	}
	var out []reconcile.Request
	for i := range sets.Items {
		set := &sets.Items[i]
		for _, t := range set.Spec.VolumeClaimTemplates {
			if _, ok := ordinalOf(t.Name+"-"+set.Name, obj.GetName()); ok {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(set)})
				break
			}
		}
	}
	return out
}

package cloneset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
)

// claimName is the name of the PVC a volume claim template gives an instance.
func claimName(template, cloneSet, id string) string {
	return template + "-" + cloneSet + "-" + id
}

// freeInstanceIDs returns instance IDs that have PVCs but no pod, oldest claims first, so that a
// new pod picks up the volumes of one that went away.
func freeInstanceIDs(s *scope) []string {
	used := map[string]bool{}
	for _, p := range append(append([]*corev1.Pod{}, s.pods...), s.terminating...) {
		used[p.Labels[appsv1alpha1.CloneSetInstanceID]] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range s.claims {
		id := c.Labels[appsv1alpha1.CloneSetInstanceID]
		if id == "" || used[id] || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

// newPod builds the pod of instance id at revision rev.
func (r *Reconciler) newPod(s *scope, rev *appsv1.ControllerRevision, id string) (*corev1.Pod, error) {
	cs := s.cs
	pod, err := podwrite.NewPod(cs, controllerKind, rev)
	if err != nil {
		return nil, err
	}
	pod.Name = cs.Name + "-" + id
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = r.revisionLabelValue(rev.Name)
	pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = revision.ShortHash(rev.Name)
	pod.Labels[appsv1alpha1.CloneSetInstanceID] = id
	state := appspub.LifecycleStateNormal
	if cs.Spec.Lifecycle != nil && cs.Spec.Lifecycle.PreNormal != nil {
		state = appspub.LifecycleStatePreparingNormal
	}
	pod.Labels[appspub.LifecycleStateKey] = string(state)
	inplaceupdate.InjectReadinessGate(pod)
	podwrite.MountClaims(pod, cs.Spec.VolumeClaimTemplates, func(t string) string { return claimName(t, cs.Name, id) })
	return pod, nil
}

// ensureClaims creates the PVCs of instance id that do not exist yet.
func (r *Reconciler) ensureClaims(ctx context.Context, s *scope, id string) error {
	cs := s.cs
	have := map[string]bool{}
	for _, c := range s.claims {
		have[c.Name] = true
	}
	for _, vct := range cs.Spec.VolumeClaimTemplates {
		name := claimName(vct.Name, cs.Name, id)
		if have[name] {
			continue
		}
		pvc := podwrite.NewClaim(cs.Namespace, name, vct, cs.Spec.Selector)
		pvc.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cs, controllerKind)}
		pvc.Labels[appsv1alpha1.CloneSetInstanceID] = id
		if err := r.Client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create persistent volume claim %s: %w", name, err)
		}
	}
	return nil
}

// deletePod deletes a pod and, when asked, the PVCs of its instance.
func (r *Reconciler) deletePod(ctx context.Context, s *scope, pod *corev1.Pod, claims bool) error {
	if deleted, err := r.writer(s).Delete(ctx, pod); err != nil || !deleted || !claims {
		return err
	}
	return r.deleteClaims(ctx, s, pod)
}

// deleteClaims deletes the PVCs of pod's instance.
func (r *Reconciler) deleteClaims(ctx context.Context, s *scope, pod *corev1.Pod) error {
	id := pod.Labels[appsv1alpha1.CloneSetInstanceID]
	for _, c := range s.claims {
		if id != "" && c.Labels[appsv1alpha1.CloneSetInstanceID] == id {
			if err := r.Client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete persistent volume claim %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

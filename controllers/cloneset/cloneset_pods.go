package cloneset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
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
	tmpl, err := inplaceupdate.SpecTemplate(rev)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            cs.Name + "-" + id,
			Namespace:       cs.Namespace,
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			Finalizers:      tmpl.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, controllerKind)},
		},
		Spec: tmpl.Spec,
	}
	for k, v := range tmpl.Labels {
		pod.Labels[k] = v
	}
	for k, v := range tmpl.Annotations {
		pod.Annotations[k] = v
	}
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = r.revisionLabelValue(rev.Name)
	pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = revision.ShortHash(rev.Name)
	pod.Labels[appsv1alpha1.CloneSetInstanceID] = id
	state := appspub.LifecycleStateNormal
	if cs.Spec.Lifecycle != nil && cs.Spec.Lifecycle.PreNormal != nil {
		state = appspub.LifecycleStatePreparingNormal
	}
	pod.Labels[appspub.LifecycleStateKey] = string(state)
	inplaceupdate.InjectReadinessGate(pod)

	for _, vct := range cs.Spec.VolumeClaimTemplates {
		vol := corev1.Volume{Name: vct.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(vct.Name, cs.Name, id)},
		}}
		replaced := false
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == vct.Name {
				pod.Spec.Volumes[i] = vol
				replaced = true
			}
		}
		if !replaced {
			pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		}
	}
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
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				Namespace:       cs.Namespace,
				Labels:          map[string]string{},
				Annotations:     vct.Annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, controllerKind)},
			},
			Spec: vct.Spec,
		}
		for k, v := range cs.Spec.Selector.MatchLabels {
			pvc.Labels[k] = v
		}
		for k, v := range vct.Labels {
			pvc.Labels[k] = v
		}
		pvc.Labels[appsv1alpha1.CloneSetInstanceID] = id
		if err := r.client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create persistent volume claim %s: %w", name, err)
		}
	}
	return nil
}

// deletePod deletes a pod and, when asked, the PVCs of its instance.
func (r *Reconciler) deletePod(ctx context.Context, s *scope, pod *corev1.Pod, claims bool) error {
	key := client.ObjectKeyFromObject(s.cs).String()
	r.scaleExp.Expect(key, expectations.Delete, pod.Name)
	if err := r.client.Delete(ctx, pod); err != nil {
		r.scaleExp.Observe(key, expectations.Delete, pod.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		r.event(s.cs, corev1.EventTypeWarning, "FailedDelete", "failed to delete pod %s: %v", pod.Name, err)
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	r.event(s.cs, corev1.EventTypeNormal, "SuccessfulDelete", "succeed to delete pod %s", pod.Name)
	if !claims {
		return nil
	}
	id := pod.Labels[appsv1alpha1.CloneSetInstanceID]
	for _, c := range s.claims {
		if id != "" && c.Labels[appsv1alpha1.CloneSetInstanceID] == id {
			if err := r.client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete persistent volume claim %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

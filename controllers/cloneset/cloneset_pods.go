package cloneset

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
)

// instanceIDLength is the length of the random part of a pod name.
const instanceIDLength = 5

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

// newInstanceIDs returns up to n IDs: free ones with volumes first (unless reuse is off), then
// new random ones that no pod or claim uses. It holds back one slot for each instance whose pod
// is still terminating and whose claims wait for it: the replacement takes that ID, and so the
// volumes, once the old pod (of the same name) is gone. held says how many slots it held back.
func newInstanceIDs(s *scope, n int) (ids []string, held int) {
	taken := map[string]bool{}
	for _, p := range append(append([]*corev1.Pod{}, s.pods...), s.terminating...) {
		taken[p.Labels[appsv1alpha1.CloneSetInstanceID]] = true
		taken[p.Name] = true
	}
	reuse := !s.cs.Spec.ScaleStrategy.DisablePVCReuse
	if reuse {
		for _, id := range freeInstanceIDs(s) {
			if len(ids) == n {
				break
			}
			ids = append(ids, id)
			taken[id] = true
		}
		waiting := map[string]bool{}
		for _, p := range s.terminating {
			id := p.Labels[appsv1alpha1.CloneSetInstanceID]
			for _, c := range s.claims {
				if id != "" && c.Labels[appsv1alpha1.CloneSetInstanceID] == id {
					waiting[id] = true
				}
			}
		}
		held = min(len(waiting), n-len(ids))
	}
	for _, c := range s.claims {
		taken[c.Labels[appsv1alpha1.CloneSetInstanceID]] = true
	}
	for len(ids) < n-held {
		id := utilrand.String(instanceIDLength)
		if taken[id] || taken[s.cs.Name+"-"+id] {
			continue
		}
		taken[id] = true
		ids = append(ids, id)
	}
	return ids, held
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

// createPods creates pods in batches that double while they succeed (1, 2, 4, ...), so that a
// quota or admission failure costs one call and not hundreds.
func (r *Reconciler) createPods(ctx context.Context, s *scope, pods []*corev1.Pod) (int, error) {
	key := client.ObjectKeyFromObject(s.cs).String()
	created := 0
	for batch := 1; created < len(pods); batch = min(2*batch, 256) {
		n := min(batch, len(pods)-created)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			pod := pods[created+i]
			r.scaleExp.Expect(key, expectations.Create, pod.Name)
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				id := pod.Labels[appsv1alpha1.CloneSetInstanceID]
				if err := r.ensureClaims(ctx, s, id); err != nil {
					errs[i] = err
					return
				}
				errs[i] = r.client.Create(ctx, pod)
			}(i)
		}
		wg.Wait()
		var firstErr error
		for i, err := range errs {
			pod := pods[created+i]
			if err != nil {
				r.scaleExp.Observe(key, expectations.Create, pod.Name)
				if firstErr == nil {
					firstErr = fmt.Errorf("create pod %s: %w", pod.Name, err)
				}
				continue
			}
			r.event(s.cs, corev1.EventTypeNormal, "SuccessfulCreate", "succeed to create pod %s", pod.Name)
		}
		created += n
		if firstErr != nil {
			// The pods after this batch were never tried; forget them too.
			for _, pod := range pods[created:] {
				r.scaleExp.Observe(key, expectations.Create, pod.Name)
			}
			r.event(s.cs, corev1.EventTypeWarning, "FailedCreate", "failed to create pods: %v", firstErr)
			return created, firstErr
		}
	}
	return created, nil
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

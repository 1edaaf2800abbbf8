package daemonset

import (
	"context"
	"errors"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
)

// apply does the API writes a plan asks for. more says that pods are left to create after this
// reconcile's share.
func (r *Reconciler) apply(ctx context.Context, s *scope, p plan) (more bool, err error) {
	lc := s.ds.Spec.Lifecycle
	markNotReady := lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady
	for _, pod := range p.prepareDelete {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStatePreparingDelete, markNotReady)
		if err != nil {
			return false, err
		}
		r.updateExp.Expect(moved)
	}
	errs := make([]error, len(p.delete)+len(p.update))
	ownedpods.Parallel(len(p.delete), func(i int) { errs[i] = r.deletePod(ctx, s, p.delete[i]) })
	ownedpods.Parallel(len(p.update), func(i int) { errs[len(p.delete)+i] = r.updateInPlace(ctx, s, p.update[i]) })
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return r.createPods(ctx, s, p.create)
}

func (r *Reconciler) deletePod(ctx context.Context, s *scope, pod *corev1.Pod) error {
	key := client.ObjectKeyFromObject(s.ds).String()
	r.scaleExp.Expect(key, expectations.Delete, pod.Name)
	if err := r.client.Delete(ctx, pod); err != nil {
		r.scaleExp.Observe(key, expectations.Delete, pod.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		r.event(s.ds, corev1.EventTypeWarning, "FailedDelete", "failed to delete pod %s: %v", pod.Name, err)
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	r.event(s.ds, corev1.EventTypeNormal, "SuccessfulDelete", "deleted pod %s on node %s", pod.Name, nodepin.TargetNode(pod))
	return nil
}

func (r *Reconciler) updateInPlace(ctx context.Context, s *scope, u podUpdate) error {
	updated, err := r.updater.Update(ctx, u.pod, u.inPlace)
	if err != nil {
		r.event(s.ds, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "failed to update pod %s in place: %v", u.pod.Name, err)
		return err
	}
	r.updateExp.Expect(updated)
	r.event(s.ds, corev1.EventTypeNormal, "SuccessfulUpdatePodInPlace", "updated pod %s in place to revision %s", u.pod.Name, u.inPlace.Revision)
	return nil
}

// createPods creates a pod on each node in slow-start batches (controllers/internal/slowstart),
// at most slowstart.MaxPerReconcile in one reconcile. Before each batch after the first it stops,
// without an error, when the reconcile's context is done or the cache shows the DaemonSet
// changed, being deleted or gone. more says that nodes are left for a later reconcile.
func (r *Reconciler) createPods(ctx context.Context, s *scope, nodes []string) (more bool, err error) {
	if len(nodes) == 0 {
		return false, nil
	}
	res, err := slowstart.Run(ctx, len(nodes), slowstart.Reread(r.client, "DaemonSet", s.ds),
		func(ctx context.Context, from, size int) error { return r.createBatch(ctx, s, nodes[from:from+size]) })
	if err != nil {
		return false, err
	}
	if res.Stopped != "" {
		ctrl.LoggerFrom(ctx).V(2).Info("Stopped creating pods", "reason", res.Stopped, "created", res.Created, "planned", len(nodes))
	}
	return res.More, nil
}

// createBatch creates one pod on each node, in parallel. A pod whose create failed is forgotten
// by the expectations at once, since the cache will never see it.
func (r *Reconciler) createBatch(ctx context.Context, s *scope, nodes []string) error {
	key := client.ObjectKeyFromObject(s.ds).String()
	pods := make([]*corev1.Pod, len(nodes))
	for i, node := range nodes {
		pod, err := newPod(s, node)
		if err != nil {
			return err
		}
		pods[i] = pod
	}
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, pod := range pods {
		r.scaleExp.Expect(key, expectations.Create, createKey(nodes[i]))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.client.Create(ctx, pod)
		}()
	}
	wg.Wait()
	var firstErr error
	for i, err := range errs {
		if err != nil {
			r.scaleExp.Observe(key, expectations.Create, createKey(nodes[i]))
			if firstErr == nil {
				firstErr = fmt.Errorf("create pod on node %s: %w", nodes[i], err)
			}
			continue
		}
		r.event(s.ds, corev1.EventTypeNormal, "SuccessfulCreate", "created pod %s on node %s", pods[i].Name, nodes[i])
	}
	if firstErr != nil {
		r.event(s.ds, corev1.EventTypeWarning, "FailedCreate", "failed to create pods: %v", firstErr)
	}
	return firstErr
}

// newPod builds the pod of the update revision for node. Its name is generated from the
// DaemonSet's; it is pinned to the node through required node affinity, so that the scheduler
// places it; it tolerates the taints every daemon tolerates and carries the InPlaceUpdateReady
// readiness gate.
func newPod(s *scope, node string) (*corev1.Pod, error) {
	ds := s.ds
	tmpl, err := inplaceupdate.SpecTemplate(s.update)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    ds.Name + "-",
			Namespace:       ds.Namespace,
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			Finalizers:      tmpl.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Spec: tmpl.Spec,
	}
	for k, v := range tmpl.Labels {
		pod.Labels[k] = v
	}
	for k, v := range tmpl.Annotations {
		pod.Annotations[k] = v
	}
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = s.hash()
	state := appspub.LifecycleStateNormal
	if ds.Spec.Lifecycle != nil && ds.Spec.Lifecycle.PreNormal != nil {
		state = appspub.LifecycleStatePreparingNormal
	}
	pod.Labels[appspub.LifecycleStateKey] = string(state)
	pod.Spec.Tolerations = withDaemonTolerations(pod.Spec.Tolerations, pod.Spec.HostNetwork)
	nodepin.PinToNode(&pod.Spec, node)
	inplaceupdate.InjectReadinessGate(pod)
	return pod, nil
}

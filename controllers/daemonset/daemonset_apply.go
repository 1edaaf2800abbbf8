package daemonset

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
)

// apply does the API writes a plan asks for. more says that pods are left to create after this
// reconcile's share.
func (r *Reconciler) apply(ctx context.Context, s *scope, p plan) (more bool, err error) {
	lc := s.ds.Spec.Lifecycle
	markNotReady := lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady
	w := r.writer(s)
	if err := w.Move(ctx, p.prepareDelete, appspub.LifecycleStatePreparingDelete, markNotReady); err != nil {
		return false, err
	}
	errs := make([]error, len(p.delete)+len(p.update))
	ownedpods.Parallel(len(p.delete), func(i int) { _, errs[i] = w.Delete(ctx, p.delete[i]) })
	ownedpods.Parallel(len(p.update), func(i int) {
		errs[len(p.delete)+i] = w.UpdateInPlace(ctx, p.update[i].Pod, p.update[i].InPlace, false)
	})
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return r.createPods(ctx, s, p.create)
}

// writer does the DaemonSet's pod writes, with the events 1.8 emits for a DaemonSet.
func (r *Reconciler) writer(s *scope) podwrite.Writer {
	return r.Writer(s.ds, nil, podwrite.Messages{
		Created: func(pod *corev1.Pod) string {
			return fmt.Sprintf("created pod %s on node %s", pod.Name, nodepin.TargetNode(pod))
		},
		Deleted: func(pod *corev1.Pod) string {
			return fmt.Sprintf("deleted pod %s on node %s", pod.Name, nodepin.TargetNode(pod))
		},
		UpdatedInPlace: func(pod *corev1.Pod, rev string) string {
			return fmt.Sprintf("updated pod %s in place to revision %s", pod.Name, rev)
		},
	})
}

// createPods creates a pod on each node in slow-start batches (controllers/internal/slowstart),
// at most slowstart.MaxPerReconcile in one reconcile. Before each batch after the first it stops,
// without an error, when the reconcile's context is done or the cache shows the DaemonSet
// changed, being deleted or gone. more says that nodes are left for a later reconcile.
func (r *Reconciler) createPods(ctx context.Context, s *scope, nodes []string) (more bool, err error) {
	if len(nodes) == 0 {
		return false, nil
	}
	res, err := slowstart.Run(ctx, len(nodes), slowstart.Reread(r.Client, "DaemonSet", s.ds),
		func(ctx context.Context, from, size int) error { return r.createBatch(ctx, s, nodes[from:from+size]) })
	if err != nil {
		return false, err
	}
	if res.Stopped != "" {
		ctrl.LoggerFrom(ctx).V(2).Info("Stopped creating pods", "reason", res.Stopped, "created", res.Created, "planned", len(nodes))
	}
	return res.More, nil
}

// createBatch creates one pod on each node, in parallel (podwrite.Writer.CreateBatch). The
// expectations know a pod by its node, since its name is generated.
func (r *Reconciler) createBatch(ctx context.Context, s *scope, nodes []string) error {
	batch := make([]podwrite.Creation, len(nodes))
	for i, node := range nodes {
		pod, err := newPod(s, node)
		if err != nil {
			return err
		}
		batch[i] = podwrite.Creation{Pod: pod, ExpectName: createKey(node), What: "pod on node " + node}
	}
	return r.writer(s).CreateBatch(ctx, batch, false)
}

// newPod builds the pod of the update revision for node. Its name is generated from the
// DaemonSet's; it is pinned to the node through required node affinity, so that the scheduler
// places it; it tolerates the taints every daemon tolerates and carries the InPlaceUpdateReady
// readiness gate.
func newPod(s *scope, node string) (*corev1.Pod, error) {
	ds := s.ds
	pod, err := podwrite.NewPod(ds, controllerKind, s.Update)
	if err != nil {
		return nil, err
	}
	pod.GenerateName = ds.Name + "-"
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

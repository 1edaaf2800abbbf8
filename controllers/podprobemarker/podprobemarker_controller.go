package podprobemarker

import (
	"context"
	"fmt"
	"time"

	"github.com/kruise-addon/kruise-addon/apis/kinds"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "podprobemarker"

// Finalizer holds a PodProbeMarker until its probes are out of every NodePodProbe.
const Finalizer = kinds.PodProbeMarkerFinalizer

// nodeProbeWait is how soon a marker is looked at again when a node it needs has no
// NodePodProbe yet (the nodepodprobe controller creates it once the node is Ready).
const nodeProbeWait = 5 * time.Second

// SetupWithManager registers the PodProbeMarker controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{client: mgr.GetClient(), serverless: d.Gates.Enabled(features.EnablePodProbeMarkerOnServerless)}
	prologue := kit.Object[*appsv1alpha1.PodProbeMarker]{Reader: r.client, Kind: "PodProbeMarker", Deleting: kit.ErrorOnly(r.finalize), Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.PodProbeMarker{}).
			Watches(&corev1.Pod{}, r.podEvents().Handler()).
			Watches(&appsv1alpha1.NodePodProbe{}, r.nodePodProbeEvents().Handler())
	})
}

// Reconciler writes PodProbeMarkers' probes into NodePodProbes.
type Reconciler struct {
	client client.Client
	// serverless is EnablePodProbeMarkerOnServerless: pods on virtual-kubelet nodes are marked
	// from the conditions their platform writes.
	serverless bool
}

// reconcile syncs one PodProbeMarker that is not being deleted.
func (r *Reconciler) reconcile(ctx context.Context, ppm *appsv1alpha1.PodProbeMarker) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(ppm, Finalizer) {
		patch := client.MergeFrom(ppm.DeepCopy())
		controllerutil.AddFinalizer(ppm, Finalizer)
		if err := r.client.Patch(ctx, ppm, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}

	byNode, serverless, err := r.matchingPods(ctx, ppm)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.serverless {
		if err := r.markServerless(ctx, ppm, serverless); err != nil {
			return ctrl.Result{}, err
		}
	}
	result, err := r.writeNodes(ctx, ppm, byNode)
	if err != nil {
		return ctrl.Result{}, err
	}

	stale, err := kit.WriteStatus(ctx, r.client, ppm, func(ppm *appsv1alpha1.PodProbeMarker) {
		ppm.Status.ObservedGeneration = ppm.Generation
		ppm.Status.MatchedPods = int64(len(serverless))
		for _, pods := range byNode {
			ppm.Status.MatchedPods += int64(len(pods))
		}
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	return kit.Sooner(result, stale), nil
}

// matchingPods returns the probed pods the marker selects: those on ordinary nodes by node, and
// those on virtual-kubelet nodes.
func (r *Reconciler) matchingPods(ctx context.Context, ppm *appsv1alpha1.PodProbeMarker) (byNode map[string][]*corev1.Pod, serverlessPods []*corev1.Pod, err error) {
	sel, err := metav1.LabelSelectorAsSelector(ppm.Spec.Selector)
	if err != nil || ppm.Spec.Selector == nil || sel.Empty() {
		// The webhook refuses such selectors; one that got in some other way matches nothing.
		return nil, nil, nil
	}
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(ppm.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, nil, fmt.Errorf("list pods: %w", err)
	}
	byNode = map[string][]*corev1.Pod{}
	serverless := map[string]bool{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !Probed(pod) {
			continue
		}
		virtual, seen := serverless[pod.Spec.NodeName]
		if !seen {
			node := &corev1.Node{}
			if err := r.client.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, node); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, nil, fmt.Errorf("get node %s: %w", pod.Spec.NodeName, err)
			}
			virtual = virtualKubelet(node)
			serverless[pod.Spec.NodeName] = virtual
		}
		if virtual {
			serverlessPods = append(serverlessPods, pod)
		} else {
			byNode[pod.Spec.NodeName] = append(byNode[pod.Spec.NodeName], pod)
		}
	}
	return byNode, serverlessPods, nil
}

// writeNodes puts ppm's probes for the matching pods into their nodes' NodePodProbes, and takes
// them out for pods that no longer match. A node with matching pods but no NodePodProbe yet is
// looked at again shortly.
func (r *Reconciler) writeNodes(ctx context.Context, ppm *appsv1alpha1.PodProbeMarker, byNode map[string][]*corev1.Pod) (ctrl.Result, error) {
	list := &appsv1alpha1.NodePodProbeList{}
	if err := r.client.List(ctx, list); err != nil {
		return ctrl.Result{}, fmt.Errorf("list nodepodprobes: %w", err)
	}
	log := ctrl.LoggerFrom(ctx)
	seen := map[string]bool{}
	for i := range list.Items {
		npp := &list.Items[i]
		seen[npp.Name] = true
		next, changed, skipped := PlanNodePodProbe(npp.Spec, ppm, byNode[npp.Name])
		for _, s := range skipped {
			log.Info("Probe left out of NodePodProbe", "NodePodProbe", klog.KObj(npp), "reason", s)
		}
		if !changed {
			continue
		}
		npp.Spec = next
		if err := r.client.Update(ctx, npp); err != nil {
			return ctrl.Result{}, fmt.Errorf("update nodepodprobe %s: %w", npp.Name, err)
		}
		log.V(2).Info("Updated NodePodProbe", "NodePodProbe", klog.KObj(npp))
	}
	for node := range byNode {
		if !seen[node] {
			log.V(2).Info("Node has no NodePodProbe yet", "NodePodProbe", klog.KRef("", node))
			return ctrl.Result{RequeueAfter: nodeProbeWait}, nil
		}
	}
	return ctrl.Result{}, nil
}

// finalize takes the marker's probes out of every NodePodProbe, then drops the finalizer.
func (r *Reconciler) finalize(ctx context.Context, ppm *appsv1alpha1.PodProbeMarker) error {
	if !controllerutil.ContainsFinalizer(ppm, Finalizer) {
		return nil
	}
	list := &appsv1alpha1.NodePodProbeList{}
	if err := r.client.List(ctx, list); err != nil {
		return fmt.Errorf("list nodepodprobes: %w", err)
	}
	for i := range list.Items {
		npp := &list.Items[i]
		next, changed := RemoveMarker(npp.Spec, ppm.Namespace, ppm.Name)
		if !changed {
			continue
		}
		npp.Spec = next
		if err := r.client.Update(ctx, npp); err != nil {
			return fmt.Errorf("remove probes from nodepodprobe %s: %w", npp.Name, err)
		}
	}
	patch := client.MergeFrom(ppm.DeepCopy())
	controllerutil.RemoveFinalizer(ppm, Finalizer)
	if err := r.client.Patch(ctx, ppm, patch); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Removed PodProbeMarker probes from NodePodProbes")
	return nil
}

// podEvents enqueues the markers of a pod (ForPod), on the changes that move a pod into or out
// of probing or change its address, and, with EnablePodProbeMarkerOnServerless, the markers
// whose condition type changed on a serverless pod.
func (r *Reconciler) podEvents() kit.Events {
	markers := func(ctx context.Context, pod *corev1.Pod) []client.ObjectKey {
		ppms, err := ForPod(ctx, r.client, pod)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing PodProbeMarkers for a pod", "pod", klog.KObj(pod))
			return nil
		}
		keys := make([]client.ObjectKey, 0, len(ppms))
		for _, ppm := range ppms {
			keys = append(keys, client.ObjectKeyFromObject(ppm))
		}
		return keys
	}
	return kit.Events{
		Create: func(ctx context.Context, obj client.Object) []client.ObjectKey {
			if pod, ok := obj.(*corev1.Pod); ok && Probed(pod) {
				return markers(ctx, pod)
			}
			return nil
		},
		Update: func(ctx context.Context, oldObj, cur client.Object) []client.ObjectKey {
			old, ok1 := oldObj.(*corev1.Pod)
			pod, ok2 := cur.(*corev1.Pod)
			if !ok1 || !ok2 {
				return nil
			}
			var keys []client.ObjectKey
			if Probed(old) != Probed(pod) || old.Status.PodIP != pod.Status.PodIP || !labels.Equals(old.Labels, pod.Labels) {
				keys = markers(ctx, pod)
				if !labels.Equals(old.Labels, pod.Labels) {
					keys = append(keys, markers(ctx, old)...)
				}
			}
			if r.serverless {
				keys = append(keys, r.serverlessConditionKeys(ctx, old, pod)...)
			}
			return keys
		},
		Delete: func(ctx context.Context, obj client.Object) []client.ObjectKey {
			if pod, ok := obj.(*corev1.Pod); ok {
				return markers(ctx, pod)
			}
			return nil
		},
	}
}

// nodePodProbeEvents enqueues every marker when a NodePodProbe is created: markers that
// found the node without one are waiting for it.
func (r *Reconciler) nodePodProbeEvents() kit.Events {
	return kit.Events{Create: func(ctx context.Context, _ client.Object) []client.ObjectKey {
		list := &appsv1alpha1.PodProbeMarkerList{}
		if err := r.client.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing PodProbeMarkers for a new NodePodProbe")
			return nil
		}
		return kit.ListKeys(list)
	}}
}

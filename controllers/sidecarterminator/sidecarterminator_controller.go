package sidecarterminator

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name and the <name> of its --<name>-workers flag.
const Name = "sidecarterminator"

// eventReason is the reason of the events on the pod, as 1.8 words it.
const eventReason = "SidecarTerminator"

// Reconciler stops the sidecars of pods whose main containers have finished.
type Reconciler struct {
	kit.Tools
}

// SetupWithManager registers the controller; it looks only at pods interesting says it may act on.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name)}
	prologue := kit.Object[*corev1.Pod]{Reader: r.Client, Kind: "Pod", Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			pod, ok := o.(*corev1.Pod)
			return ok && interesting(pod)
		})))
	})
}

// reconcile decides what the pod needs and does it: the image swaps, the stop of the sidecars,
// and, once those are done, the pod's phase and the stop of the sidecars whose exit code it
// ignores.
func (r *Reconciler) reconcile(ctx context.Context, pod *corev1.Pod) (ctrl.Result, error) {
	if !interesting(pod) {
		return ctrl.Result{}, nil
	}
	virtual, err := r.onVirtualKubelet(ctx, pod)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := decide(pod, virtual)
	if err := r.swapImages(ctx, pod, p.swapImages); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.stopByRequest(ctx, pod, p.stop); err != nil {
		return ctrl.Result{}, err
	}
	if p.terminate != "" {
		if err := r.terminate(ctx, pod, p.terminate); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.stopByRequest(ctx, pod, p.stopIgnoringExitCode)
}

// onVirtualKubelet tells whether the pod's node is a virtual-kubelet node.
func (r *Reconciler) onVirtualKubelet(ctx context.Context, pod *corev1.Pod) (bool, error) {
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, node); err != nil {
		return false, fmt.Errorf("get node %s of the pod: %w", pod.Spec.NodeName, err)
	}
	return node.Labels[appsv1alpha1.VirtualKubeletNodeLabel] == appsv1alpha1.VirtualKubeletNodeType, nil
}

// RequestName is the name of the ContainerRecreateRequest that stops a pod's sidecars, as 1.8
// names it.
func RequestName(pod *corev1.Pod) string {
	return "sidecar-termination-" + string(pod.UID)
}

// stopByRequest creates the pod's ContainerRecreateRequest for the sidecars named, unless it
// exists: one request per pod, as in 1.8, which kruise-daemon carries out.
func (r *Reconciler) stopByRequest(ctx context.Context, pod *corev1.Pod, sidecars []string) error {
	if len(sidecars) == 0 {
		return nil
	}
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: RequestName(pod)}
	if found, err := kit.Lookup(ctx, r.Client, key, crr); err != nil {
		return fmt.Errorf("get containerrecreaterequest %s: %w", key.Name, err)
	} else if found {
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the sidecars' ContainerRecreateRequest", "ContainerRecreateRequest", key.Name)
		return nil
	}
	crr = &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       pod.Namespace,
			Name:            key.Name,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(pod, corev1.SchemeGroupVersion.WithKind("Pod"))},
		},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName: pod.Name,
			Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{
				ForceRecreate: true,
				FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore,
			},
		},
	}
	for _, name := range sidecars {
		crr.Spec.Containers = append(crr.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: name})
	}
	if err := r.Client.Create(ctx, crr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("create containerrecreaterequest %s: %w", key.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Created a ContainerRecreateRequest to stop sidecars", "ContainerRecreateRequest", key.Name, "containers", sidecars)
	r.Recorder.Eventf(pod, corev1.EventTypeNormal, eventReason, "Kruise SidecarTerminator is trying to terminate sidecar %v using crr", sidecars)
	return nil
}

// swapImages gives the sidecars named their stop image by an in-place update of the pod.
func (r *Reconciler) swapImages(ctx context.Context, pod *corev1.Pod, images map[string]string) error {
	if len(images) == 0 {
		return nil
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &corev1.Pod{}
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		changed := false
		for i := range cur.Spec.Containers {
			c := &cur.Spec.Containers[i]
			if image, ok := images[c.Name]; ok && c.Image != image {
				c.Image, changed = image, true
			}
		}
		if !changed {
			return nil
		}
		return r.Client.Update(ctx, cur)
	})
	if err != nil {
		return fmt.Errorf("update the sidecars' images to stop them: %w", err)
	}
	names := make([]string, 0, len(images))
	for i := range pod.Spec.Containers {
		if _, ok := images[pod.Spec.Containers[i].Name]; ok {
			names = append(names, pod.Spec.Containers[i].Name)
		}
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Updated sidecars in place to stop them", "containers", names)
	r.Recorder.Eventf(pod, corev1.EventTypeNormal, eventReason, "Kruise SidecarTerminator is trying to terminate sidecar %v using in-place update", names)
	return nil
}

// terminate writes phase and the SidecarTerminated condition on the pod's status; the kubelet
// then stops what still runs and keeps the phase.
func (r *Reconciler) terminate(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase) error {
	status := corev1.PodStatus{
		Phase: phase,
		Conditions: []corev1.PodCondition{{
			Type:               appsv1alpha1.SidecarTerminatedCondition,
			Status:             corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(r.Clock.Now()),
			Message:            "Terminated by Sidecar Terminator",
		}},
	}
	body, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("encode the pod's status patch: %w", err)
	}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	if err := r.Client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, body)); err != nil {
		return fmt.Errorf("set the pod's phase %s: %w", phase, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Ended the pod's phase for its sidecars", "phase", phase)
	return nil
}

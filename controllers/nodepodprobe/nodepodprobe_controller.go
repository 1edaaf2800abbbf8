package nodepodprobe

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "nodepodprobe"

// SetupWithManager registers the NodePodProbe controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{client: mgr.GetClient()}
	return kit.Setup(mgr, d, Name, r, func(b *kit.Builder) *kit.Builder {
		return b. // The spec is written by the marker controller and this one; a pass is needed when the
			// node agent reports results, or when the object is created or goes.
			For(&appsv1alpha1.NodePodProbe{}, kit.OnUpdate(statusChanged)).
			Watches(&corev1.Node{}, kit.SameKey()).
			Watches(&corev1.Pod{}, podEvents().Handler())
	})
}

// Reconciler keeps one NodePodProbe per node and marks pods from its results.
type Reconciler struct {
	client client.Client
}

// Reconcile handles the NodePodProbe and the Node sharing req's name.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, node, npp, err := kit.NodeAnd[*appsv1alpha1.NodePodProbe](ctx, r.client, "NodePodProbe", req)
	if err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	switch {
	case node == nil || node.DeletionTimestamp != nil:
		if npp == nil {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, kit.DeleteOfGoneNode(ctx, r.client, "NodePodProbe", npp)
	case npp == nil:
		if node.Labels["type"] == appsv1alpha1.VirtualKubeletNodeType || !nodeReady(node) {
			return ctrl.Result{}, nil
		}
		npp = &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node.Name}}
		if err := r.client.Create(ctx, npp); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create nodepodprobe: %w", err)
		}
		log.Info("Created NodePodProbe")
		return ctrl.Result{}, nil
	case npp.DeletionTimestamp != nil:
		return ctrl.Result{}, nil
	}

	pods := map[string]*corev1.Pod{}
	var getErr error
	next, pruned := PruneSpec(npp.Spec, func(pp appsv1alpha1.PodProbe) bool {
		pod := &corev1.Pod{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: pp.Namespace, Name: pp.Name}, pod); err != nil {
			if !apierrors.IsNotFound(err) && getErr == nil {
				getErr = fmt.Errorf("get pod %s/%s: %w", pp.Namespace, pp.Name, err)
			}
			return !apierrors.IsNotFound(err)
		}
		if string(pod.UID) != pp.UID || !active(pod) {
			return false
		}
		pods[pp.UID] = pod
		return true
	})
	if getErr != nil {
		return ctrl.Result{}, getErr
	}
	if pruned {
		npp.Spec = next
		if err := r.client.Update(ctx, npp); err != nil {
			return ctrl.Result{}, fmt.Errorf("drop gone pods from nodepodprobe: %w", err)
		}
		log.V(2).Info("Dropped gone pods from NodePodProbe")
	}

	for _, st := range npp.Status.PodProbeStatuses {
		pod, ok := pods[st.UID]
		if !ok {
			continue
		}
		if err := r.mark(ctx, pod, st); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// mark writes the marks the probe results ask of pod: metadata with a merge patch, each
// condition with a patch of that condition alone (a probe's condition type has one writer).
func (r *Reconciler) mark(ctx context.Context, pod *corev1.Pod, st appsv1alpha1.PodProbeStatus) error {
	markers := map[string]*appsv1alpha1.PodProbeMarker{}
	var getErr error
	lookup := func(name string) *appsv1alpha1.PodProbeMarker {
		if ppm, ok := markers[name]; ok {
			return ppm
		}
		ppm := &appsv1alpha1.PodProbeMarker{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: name}, ppm); err != nil {
			if !apierrors.IsNotFound(err) && getErr == nil {
				getErr = fmt.Errorf("get podprobemarker %s/%s: %w", pod.Namespace, name, err)
			}
			ppm = nil
		} else if ppm.DeletionTimestamp != nil {
			ppm = nil
		}
		markers[name] = ppm
		return ppm
	}
	m := PlanMarks(pod, st, lookup)
	if getErr != nil {
		return getErr
	}
	if m.Empty() {
		return nil
	}
	if len(m.Labels) > 0 || len(m.Annotations) > 0 {
		if err := kit.PatchMetadata(ctx, r.client, pod.DeepCopy(), m.Labels, m.Annotations); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("mark pod %s: %w", pod.Name, err)
		}
	}
	for _, c := range m.Conditions {
		if _, err := podcondition.PatchOwn(ctx, r.client, pod, c); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Marked pod from probe results", "Pod", klog.KObj(pod))
	return nil
}

func active(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// statusChanged passes the status changes of NodePodProbes (kit.OnUpdate passes creations and
// deletions).
func statusChanged(oldObj, curObj client.Object) bool {
	old, ok1 := oldObj.(*appsv1alpha1.NodePodProbe)
	cur, ok2 := curObj.(*appsv1alpha1.NodePodProbe)
	return !ok1 || !ok2 || !apiequality.Semantic.DeepEqual(old.Status, cur.Status)
}

// podEvents enqueues the NodePodProbe of a pod's node when the pod stops being active or
// goes, so its entry leaves the spec.
func podEvents() kit.Events {
	return kit.Events{
		Update: func(_ context.Context, oldObj, cur client.Object) []client.ObjectKey {
			old, ok1 := oldObj.(*corev1.Pod)
			pod, ok2 := cur.(*corev1.Pod)
			if ok1 && ok2 && active(old) && !active(pod) {
				return nodeProbeOf(pod)
			}
			return nil
		},
		Delete: func(_ context.Context, obj client.Object) []client.ObjectKey {
			if pod, ok := obj.(*corev1.Pod); ok {
				return nodeProbeOf(pod)
			}
			return nil
		},
	}
}

// nodeProbeOf names the NodePodProbe of pod's node, if it has one.
func nodeProbeOf(pod *corev1.Pod) []client.ObjectKey {
	if pod.Spec.NodeName == "" {
		return nil
	}
	return []client.ObjectKey{{Name: pod.Spec.NodeName}}
}

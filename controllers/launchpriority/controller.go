package launchpriority

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name and the <name> of its --<name>-workers flag.
const Name = "containerlaunchpriority"

// Reconciler opens the launch barriers of pods that start their containers in order.
type Reconciler struct {
	client client.Client
	// live reads barrier ConfigMaps: they are read by name, so no ConfigMap is cached.
	live client.Reader
}

// SetupWithManager registers the controller. It looks only at pods with a barrier that has not
// completed.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{client: mgr.GetClient(), live: mgr.GetAPIReader()}
	// A deleting pod is not waiting: the pass itself leaves it alone.
	prologue := kit.Object[*corev1.Pod]{Reader: r.client, Kind: "Pod", KeepDeleting: true, Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			pod, ok := o.(*corev1.Pod)
			return ok && waiting(pod)
		})))
	})
}

// waiting tells a live pod with barrier env whose barrier has not completed.
func waiting(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Annotations[CompletedKey] == "true" {
		return false
	}
	for i := range pod.Spec.Containers {
		if barrierKey(&pod.Spec.Containers[i]) != "" {
			return true
		}
	}
	return false
}

// reconcile creates the pod's barrier ConfigMap and adds the next priority's key, and marks the
// pod completed once every key is there.
func (r *Reconciler) reconcile(ctx context.Context, pod *corev1.Pod) (ctrl.Result, error) {
	if !waiting(pod) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: BarrierName(pod.Name)}
	if err := r.live.Get(ctx, key, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("get barrier %s: %w", key.Name, err)
		}
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: key.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}}}
		if err := r.client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create barrier %s: %w", key.Name, err)
		}
		log.V(2).Info("Created launch barrier", "configMap", key.Name)
	}
	// Open keys while the containers before them are ready: a pod whose containers are already
	// ready (a restart, say) sends no further event to wait for.
	data := map[string]string{}
	for k, v := range cm.Data {
		data[k] = v
	}
	for {
		next, done := nextKey(pod, data)
		if done {
			if err := kit.PatchAnnotation(ctx, r.client, pod, CompletedKey, ptr.To("true")); err != nil {
				return ctrl.Result{}, fmt.Errorf("mark launch priority completed: %w", err)
			}
			return ctrl.Result{}, nil
		}
		if next == "" {
			// The pod's next status change (a container going ready) brings it back.
			return ctrl.Result{}, nil
		}
		body, err := json.Marshal(map[string]any{"data": map[string]string{next: "true"}})
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, body)); err != nil {
			return ctrl.Result{}, fmt.Errorf("open barrier %s key %s: %w", key.Name, next, err)
		}
		log.V(2).Info("Opened launch barrier", "key", next)
		data[next] = "true"
	}
}

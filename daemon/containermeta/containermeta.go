package containermeta

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// Options tune a Controller.
type Options struct {
	NodeName string
	// Resync is how often a pod is compared with the runtime again: the runtime sends no events.
	Resync time.Duration
}

// Controller keeps the runtime-containers-meta annotation of its node's pods current.
type Controller struct {
	client  client.Client
	runtime *cri.Runtime
	opts    Options
}

// New returns a controller; c reads pods from the node-scoped cache and patches their status.
func New(c client.Client, rt *cri.Runtime, o Options) *Controller {
	if o.Resync <= 0 {
		o.Resync = 10 * time.Second
	}
	return &Controller{client: c, runtime: rt, opts: o}
}

// SetupWithManager registers the controller on pods.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("containermeta").For(&corev1.Pod{}).Complete(c)
}

// Reconcile writes the annotation of one pod when it differs from what the runtime runs.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := c.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.NodeName != c.opts.NodeName || pod.DeletionTimestamp != nil ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return ctrl.Result{}, nil
	}
	running, err := cri.PodContainers(ctx, c.runtime, string(pod.UID))
	if err != nil {
		return ctrl.Result{}, err
	}
	want := Build(pod, running)
	if len(want.Containers) == 0 {
		return ctrl.Result{RequeueAfter: c.opts.Resync}, nil
	}
	raw, err := json.Marshal(want)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("encode containers meta: %w", err)
	}
	if pod.Annotations[appspub.RuntimeContainerMetaKey] == string(raw) {
		return ctrl.Result{RequeueAfter: c.opts.Resync}, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{appspub.RuntimeContainerMetaKey: string(raw)}}})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("encode patch: %w", err)
	}
	// Through the status subresource: the daemon may write pods/status only, never a pod's spec.
	// The apiserver keeps annotation changes made there; it resets the spec and owner references.
	if err := c.client.Status().Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return ctrl.Result{}, fmt.Errorf("patch pod %s containers meta: %w", klog.KObj(pod), err)
	}
	klog.FromContext(ctx).V(3).Info("wrote runtime containers meta", "pod", klog.KObj(pod))
	return ctrl.Result{RequeueAfter: c.opts.Resync}, nil
}

// Build lists, in pod spec order, the runtime container of each spec container that has one.
// The kubelet hashes only the fields it compares, so its hash stands for both plain hashes.
func Build(pod *corev1.Pod, running map[string]*cri.Container) appspub.RuntimeContainerMetaSet {
	out := appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{}}
	for _, sc := range pod.Spec.Containers {
		rc := running[sc.Name]
		if rc == nil {
			continue
		}
		out.Containers = append(out.Containers, appspub.RuntimeContainerMeta{
			Name:         sc.Name,
			ContainerID:  rc.FullID,
			RestartCount: rc.RestartCount,
			Hashes:       appspub.RuntimeContainerHashes{PlainHash: rc.Hash, PlainHashWithoutResources: rc.Hash},
		})
	}
	return out
}

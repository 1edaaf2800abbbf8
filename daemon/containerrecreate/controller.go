package containerrecreate

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

const (
	// recheckInterval is how often a CRR in progress is looked at again: the runtime sends no
	// events, so the recreated container is noticed by polling.
	recheckInterval = 2 * time.Second
)

// Options tune a Controller.
type Options struct {
	NodeName string
	Clock    clock.Clock
	// HTTPClient runs HTTP preStop hooks.
	HTTPClient *http.Client
	// WatchPods also requeues a pod's CRRs on its own changes (the DaemonWatchingPod gate).
	WatchPods bool
}

// Controller recreates the containers that CRRs of its node name.
type Controller struct {
	client  client.Client
	live    client.Reader
	pods    client.Reader
	runtime *cri.Runtime
	stopper *cri.Stopper
	opts    Options
}

// New returns a controller; c holds the node-scoped CRR cache and writes, live reads the
// picked CRR from the apiserver (the cache may not have our last write yet, and states computed
// from a stale copy would drop what was recorded), pods reads pods.
func New(c client.Client, live, pods client.Reader, rt *cri.Runtime, o Options) *Controller {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	stopper := &cri.Stopper{Runtime: rt, Clock: o.Clock, HTTPClient: o.HTTPClient}
	return &Controller{client: c, live: live, pods: pods, runtime: rt, stopper: stopper, opts: o}
}

// SetupWithManager registers the controller; requests are keyed by pod (namespace/podName).
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	toPod := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		crr, ok := o.(*appsv1alpha1.ContainerRecreateRequest)
		if !ok || crr.Labels[appsv1alpha1.ContainerRecreateRequestNodeNameKey] != c.opts.NodeName {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).Named("containerrecreate-daemon").
		Watches(&appsv1alpha1.ContainerRecreateRequest{}, toPod)
	if c.opts.WatchPods {
		b = b.Watches(&corev1.Pod{}, &handler.EnqueueRequestForObject{})
	}
	return b.Complete(c)
}

// Reconcile works on the one active CRR of the pod named by req.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := c.client.List(ctx, list, client.InNamespace(req.Namespace), client.MatchingLabels{
		appsv1alpha1.ContainerRecreateRequestPodNameKey:  req.Name,
		appsv1alpha1.ContainerRecreateRequestNodeNameKey: c.opts.NodeName,
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list crrs of pod %s: %w", req, err)
	}
	crrs := list.Items
	sortCRRs(crrs)
	var picked *appsv1alpha1.ContainerRecreateRequest
	for i := range crrs {
		crr := &crrs[i]
		if crr.DeletionTimestamp != nil || crr.Status.CompletionTime != nil {
			continue
		}
		if picked == nil {
			picked = crr
			continue
		}
		if crr.Status.Phase == "" {
			if err := c.setPhase(ctx, crr, appsv1alpha1.ContainerRecreateRequestPending); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if picked == nil {
		return ctrl.Result{}, nil
	}
	fresh := &appsv1alpha1.ContainerRecreateRequest{}
	if err := c.live.Get(ctx, client.ObjectKeyFromObject(picked), fresh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if fresh.DeletionTimestamp != nil || fresh.Status.CompletionTime != nil {
		return ctrl.Result{}, nil
	}
	picked = fresh
	log := klog.FromContext(ctx).WithValues("crr", klog.KObj(picked))
	ctx = klog.NewContext(ctx, log)
	if picked.Status.Phase != appsv1alpha1.ContainerRecreateRequestRecreating {
		return ctrl.Result{}, c.setPhase(ctx, picked, appsv1alpha1.ContainerRecreateRequestRecreating)
	}
	if s := picked.Spec.Strategy; s != nil && s.UnreadyGracePeriodSeconds != nil {
		raw := picked.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey]
		if raw == "" {
			log.V(3).Info("waiting for the pod to be made unready")
			return ctrl.Result{}, nil
		}
		at, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			return ctrl.Result{}, c.complete(ctx, picked, fmt.Sprintf("failed to parse unready time %s: %v", raw, err))
		}
		if left := time.Duration(*s.UnreadyGracePeriodSeconds)*time.Second - c.opts.Clock.Since(at); left > 0 {
			return ctrl.Result{RequeueAfter: left + 100*time.Millisecond}, nil
		}
	}
	return c.manage(ctx, picked)
}

// manage stops the next container of the CRR and records the states.
func (c *Controller) manage(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := c.pods.Get(ctx, types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod); err != nil {
		return ctrl.Result{}, c.complete(ctx, crr, fmt.Sprintf("failed to get Pod for CRR: %v", err))
	}
	podUID := crr.Labels[appsv1alpha1.ContainerRecreateRequestPodUIDKey]
	if podUID == "" {
		podUID = string(pod.UID)
	}
	running, err := cri.PodContainers(ctx, c.runtime, podUID)
	if err != nil {
		return ctrl.Result{}, err
	}
	if missingContext(crr) {
		return ctrl.Result{}, c.injectContext(ctx, crr, running)
	}
	states := currentStates(crr, running, c.opts.Clock.Now())
	if !apiequality.Semantic.DeepEqual(crr.Status.ContainerRecreateStates, states) {
		return ctrl.Result{RequeueAfter: recheckInterval}, c.patchStates(ctx, crr, states)
	}
	failurePolicy := appsv1alpha1.ContainerRecreateRequestFailurePolicyFail
	ordered := false
	if s := crr.Spec.Strategy; s != nil {
		ordered = s.OrderedRecreate
		if s.FailurePolicy != "" {
			failurePolicy = s.FailurePolicy
		}
	}
	completed := 0
loop:
	for i := range states {
		st := &states[i]
		switch st.Phase {
		case appsv1alpha1.ContainerRecreateRequestSucceeded:
			completed++
			continue
		case appsv1alpha1.ContainerRecreateRequestFailed:
			completed++
			if failurePolicy == appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore {
				continue
			}
			return ctrl.Result{}, c.complete(ctx, crr, "")
		case appsv1alpha1.ContainerRecreateRequestRecreating:
			// A container going down counts as stopped, as in 1.8, so forceRecreate does not
			// stop its next start again.
			st.IsKilled = true
			if ordered {
				break loop
			}
			continue
		}
		rc := running[st.Name]
		if rc == nil {
			break
		}
		if err := c.stop(ctx, crr, pod, &crr.Spec.Containers[i], rc); err != nil {
			klog.FromContext(ctx).Error(err, "stopping container", "container", st.Name)
			st.Phase, st.Message = appsv1alpha1.ContainerRecreateRequestFailed, fmt.Sprintf("kill container error: %v", err)
			if failurePolicy == appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore {
				continue
			}
			return ctrl.Result{}, c.patchStates(ctx, crr, states)
		}
		st.Phase, st.IsKilled, st.Message = appsv1alpha1.ContainerRecreateRequestRecreating, true, ""
		break
	}
	if !apiequality.Semantic.DeepEqual(crr.Status.ContainerRecreateStates, states) {
		return ctrl.Result{RequeueAfter: recheckInterval}, c.patchStates(ctx, crr, states)
	}
	if completed == len(states) {
		return ctrl.Result{}, c.complete(ctx, crr, "")
	}
	return ctrl.Result{RequeueAfter: recheckAfter(pod)}, nil
}

// stop stops the container through the daemon's shared CRI stop, with the CRR's preStop hook
// and grace period.
func (c *Controller) stop(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod, spec *appsv1alpha1.ContainerRecreateRequestContainer, rc *cri.Container) error {
	grace := cri.DefaultGracePeriod
	if s := crr.Spec.Strategy; s != nil && s.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*s.TerminationGracePeriodSeconds) * time.Second
	}
	return c.stopper.Stop(ctx, rc, hookOf(pod, spec), grace)
}

// hookOf is the CRR container's preStop hook as the stopper runs it, or nil.
func hookOf(pod *corev1.Pod, spec *appsv1alpha1.ContainerRecreateRequestContainer) *cri.Hook {
	if spec.PreStop == nil {
		return nil
	}
	return &cri.Hook{Exec: spec.PreStop.Exec, HTTPGet: spec.PreStop.HTTPGet, Ports: spec.Ports, PodIP: pod.Status.PodIP}
}

func missingContext(crr *appsv1alpha1.ContainerRecreateRequest) bool {
	for _, c := range crr.Spec.Containers {
		if c.StatusContext == nil {
			return true
		}
	}
	return false
}

// injectContext fills statusContext from the runtime when the webhook did not.
func (c *Controller) injectContext(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, running map[string]*cri.Container) error {
	crr = crr.DeepCopy()
	for i := range crr.Spec.Containers {
		sc := &crr.Spec.Containers[i]
		if sc.StatusContext != nil {
			continue
		}
		ctxv := &appsv1alpha1.ContainerRecreateRequestContainerContext{}
		if rc := running[sc.Name]; rc != nil {
			ctxv.ContainerID, ctxv.RestartCount = rc.FullID, rc.RestartCount
		}
		sc.StatusContext = ctxv
	}
	if err := c.client.Update(ctx, crr); err != nil {
		return fmt.Errorf("fill crr status context: %w", err)
	}
	return nil
}

func (c *Controller) patchStates(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, states []appsv1alpha1.ContainerRecreateRequestContainerRecreateState) error {
	base := crr.DeepCopy()
	crr = crr.DeepCopy()
	crr.Status.ContainerRecreateStates = states
	if err := c.client.Status().Patch(ctx, crr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("patch crr container states: %w", err)
	}
	return nil
}

func (c *Controller) setPhase(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, phase appsv1alpha1.ContainerRecreateRequestPhase) error {
	crr = crr.DeepCopy()
	crr.Status.Phase = phase
	if err := c.client.Status().Update(ctx, crr); err != nil {
		return fmt.Errorf("set crr phase %s: %w", phase, err)
	}
	return nil
}

// complete marks the daemon's part done; the manager turns Completed into Succeeded or Failed.
func (c *Controller) complete(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, msg string) error {
	crr = crr.DeepCopy()
	now := metav1.NewTime(c.opts.Clock.Now())
	crr.Status.Phase = appsv1alpha1.ContainerRecreateRequestCompleted
	crr.Status.CompletionTime = &now
	crr.Status.Message = msg
	if err := c.client.Status().Update(ctx, crr); err != nil {
		return fmt.Errorf("complete crr: %w", err)
	}
	return nil
}

package containermeta

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// Options tune a Controller.
type Options struct {
	NodeName string
	// Resync is how often a pod is compared with the runtime again: the runtime sends no events.
	Resync time.Duration
	// EnvFromMetadata records each container's env-from-metadata hash and restarts containers
	// whose env an in-place update changed (the InPlaceUpdateEnvFromMetadata gate).
	EnvFromMetadata bool
	// Stopper stops containers; nil uses cri.NewStopper on the runtime.
	Stopper *cri.Stopper
	// Settle is how long a decided restart waits before the stop (DefaultSettle when 0).
	Settle time.Duration
	// Clock times the settle period; nil is the real clock.
	Clock clock.PassiveClock
}

// workers bounds the pods worked on at once: a restart waits out the container's stop.
const workers = 4

// envRetry is how soon a pod whose env hash could not be read is tried again.
const envRetry = 3 * time.Second

// Controller keeps the runtime-containers-meta annotation of its node's pods current, and
// restarts the containers an env-from-metadata update asks for.
type Controller struct {
	client  client.Client
	runtime *cri.Runtime
	opts    Options
	settler *settler
}

// New returns a controller; c reads pods from the node-scoped cache and patches their status.
func New(c client.Client, rt *cri.Runtime, o Options) *Controller {
	if o.Resync <= 0 {
		o.Resync = 10 * time.Second
	}
	if o.Stopper == nil {
		o.Stopper = cri.NewStopper(rt)
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Controller{client: c, runtime: rt, opts: o, settler: newSettler()}
}

// SetupWithManager registers the controller on pods.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("containermeta").For(&corev1.Pod{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).Complete(c)
}

// Reconcile writes the annotation of one pod when it differs from what the runtime runs, then
// stops the containers whose env no longer matches the pod's metadata during an update.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := c.client.Get(ctx, req.NamespacedName, pod); err != nil {
		c.settler.forget(req.String())
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.NodeName != c.opts.NodeName || pod.DeletionTimestamp != nil ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		c.settler.forget(req.String())
		return ctrl.Result{}, nil
	}
	log := klog.FromContext(ctx) // controller-runtime has put the pod on it
	running, err := cri.PodContainers(ctx, c.runtime, string(pod.UID))
	if err != nil {
		return ctrl.Result{}, err
	}
	result := ctrl.Result{RequeueAfter: c.opts.Resync}
	var envHashes map[string]uint64
	if c.opts.EnvFromMetadata {
		var missing bool
		envHashes, missing = c.envHashes(ctx, pod, running)
		if missing {
			result.RequeueAfter = envRetry
		}
	}
	want := Build(pod, running, envHashes)
	if len(want.Containers) == 0 {
		return result, nil
	}
	if err := c.write(ctx, pod, want); err != nil {
		return ctrl.Result{}, err
	}
	if !c.opts.EnvFromMetadata {
		return result, nil
	}
	byID := map[string]*cri.Container{}
	var ids []string
	for _, name := range ToRestart(pod, want, running) {
		byID[running[name].FullID] = running[name]
		ids = append(ids, running[name].FullID)
	}
	due, wait := c.settler.due(req.String(), ids, c.opts.Clock.Now(), c.opts.Settle)
	if wait > 0 && wait < result.RequeueAfter {
		result.RequeueAfter = wait
	}
	for _, id := range due {
		rc := byID[id]
		log.Info("Restarting container: its env from pod metadata is out of date", "container", rc.Name, "containerID", rc.FullID)
		if err := c.opts.Stopper.Stop(ctx, rc, hook(pod, rc.Name), gracePeriod(pod)); err != nil {
			return ctrl.Result{}, fmt.Errorf("restart container %s of pod %s: %w", rc.Name, klog.KObj(pod), err)
		}
		c.settler.done(req.String(), id)
	}
	return result, nil
}

// write patches the annotation when it differs from want.
func (c *Controller) write(ctx context.Context, pod *corev1.Pod, want appspub.RuntimeContainerMetaSet) error {
	raw, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("encode containers meta: %w", err)
	}
	if pod.Annotations[appspub.RuntimeContainerMetaKey] == string(raw) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{appspub.RuntimeContainerMetaKey: string(raw)}}})
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	// Through the status subresource: the daemon may write pods/status only, never a pod's spec.
	// The apiserver keeps annotation changes made there; it resets the spec and owner references.
	if err := c.client.Status().Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("patch pod %s containers meta: %w", klog.KObj(pod), err)
	}
	klog.FromContext(ctx).V(3).Info("Wrote runtime containers meta")
	return nil
}

// envHashes returns, by container name, the env-from-metadata hash of each running container.
// A hash is computed once per container ID, from the env the container really has, and then
// carried over from the annotation; so a container that was started before its pod's labels
// changed keeps the hash of its old env. missing reports a container whose env could not be
// read this time.
func (c *Controller) envHashes(ctx context.Context, pod *corev1.Pod, running map[string]*cri.Container) (map[string]uint64, bool) {
	old := recordedSet(pod)
	out := map[string]uint64{}
	missing := false
	for i := range pod.Spec.Containers {
		sc := &pod.Spec.Containers[i]
		rc := running[sc.Name]
		if rc == nil {
			continue
		}
		if h := Recorded(old, sc.Name, rc.FullID); h != 0 {
			out[sc.Name] = h
			continue
		}
		if !rc.Running() {
			continue
		}
		var env map[string]string
		h, err := envhash.Current(sc, func(name string) (string, error) {
			if env == nil {
				e, err := cri.ContainerEnv(ctx, c.runtime, rc.ID)
				if err != nil {
					return "", err
				}
				env = e
			}
			return env[name], nil
		})
		if err != nil {
			klog.FromContext(ctx).Error(err, "Reading the env of container", "container", sc.Name, "containerID", rc.FullID)
			missing = true
			continue
		}
		out[sc.Name] = h
	}
	return out, missing
}

// recordedSet is the pod's runtime-containers-meta, or nil when absent or unreadable.
func recordedSet(pod *corev1.Pod) *appspub.RuntimeContainerMetaSet {
	raw, ok := pod.Annotations[appspub.RuntimeContainerMetaKey]
	if !ok {
		return nil
	}
	var set appspub.RuntimeContainerMetaSet
	if err := json.Unmarshal([]byte(raw), &set); err != nil {
		return nil
	}
	return &set
}

// Recorded is the env-from-metadata hash set records for the named container with the given
// container ID, or 0: a new container ID is hashed afresh.
func Recorded(set *appspub.RuntimeContainerMetaSet, name, containerID string) uint64 {
	if set == nil {
		return 0
	}
	for _, m := range set.Containers {
		if m.Name == name && m.ContainerID == containerID {
			return m.Hashes.ExtractedEnvFromMetadataHash
		}
	}
	return 0
}

// Build lists, in pod spec order, the runtime container of each spec container that has one,
// with its env-from-metadata hash from envHashes (by name; absent is 0, not recorded).
// The kubelet hashes only the fields it compares, so its hash stands for both plain hashes.
func Build(pod *corev1.Pod, running map[string]*cri.Container, envHashes map[string]uint64) appspub.RuntimeContainerMetaSet {
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
			Hashes: appspub.RuntimeContainerHashes{PlainHash: rc.Hash, PlainHashWithoutResources: rc.Hash,
				ExtractedEnvFromMetadataHash: envHashes[sc.Name]},
		})
	}
	return out
}

// ToRestart names, in pod spec order, the running containers to restart so that they pick up
// env from the pod's current labels and annotations. That is only while an in-place update that
// changes such env is in progress: the in-place update state has updateEnvFromMetadata and the
// pod's InPlaceUpdateReady condition is False (a pod without that readiness gate has no
// condition; its state alone counts). A container is restarted when the hash recorded for its
// container ID differs from the hash the pod's current metadata gives; a container whose hash is
// not recorded yet waits.
func ToRestart(pod *corev1.Pod, set appspub.RuntimeContainerMetaSet, running map[string]*cri.Container) []string {
	if !updatingEnv(pod) {
		return nil
	}
	var out []string
	for i := range pod.Spec.Containers {
		sc := &pod.Spec.Containers[i]
		rc := running[sc.Name]
		if rc == nil || !rc.Running() {
			continue
		}
		h := Recorded(&set, sc.Name, rc.FullID)
		if h != 0 && h != envhash.Expected(sc, pod) {
			out = append(out, sc.Name)
		}
	}
	return out
}

// updatingEnv reports whether an in-place update that changes env from metadata is in progress.
func updatingEnv(pod *corev1.Pod) bool {
	raw, ok := appspub.GetInPlaceUpdateState(pod)
	if !ok {
		return false
	}
	var state appspub.InPlaceUpdateState
	if err := json.Unmarshal([]byte(raw), &state); err != nil || !state.UpdateEnvFromMetadata {
		return false
	}
	gated := false
	for _, g := range pod.Spec.ReadinessGates {
		gated = gated || g.ConditionType == appspub.InPlaceUpdateReady
	}
	if !gated {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == appspub.InPlaceUpdateReady {
			return c.Status == corev1.ConditionFalse
		}
	}
	return false
}

// hook is the named container's preStop hook, as the kubelet would run it, or nil.
func hook(pod *corev1.Pod, name string) *cri.Hook {
	for _, c := range pod.Spec.Containers {
		if c.Name != name || c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
			continue
		}
		h := c.Lifecycle.PreStop
		return &cri.Hook{Exec: h.Exec, HTTPGet: h.HTTPGet, Ports: c.Ports, PodIP: pod.Status.PodIP}
	}
	return nil
}

// gracePeriod is the pod's termination grace period, or the kubelet's default.
func gracePeriod(pod *corev1.Pod) time.Duration {
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return cri.DefaultGracePeriod
}

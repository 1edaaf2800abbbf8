package inplaceupdate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/dump"

	"hash/fnv"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// Condition reasons on InPlaceUpdateReady.
const (
	ReasonStarted   = "StartInPlaceUpdate"
	ReasonCompleted = "InPlaceUpdateCompleted"
)

// Updater applies plans to pods and follows them to completion.
type Updater struct {
	Client client.Client
	// Reader reads the apiserver itself (the manager's API reader) when a write conflicted, so
	// the retry starts from the write it lost to rather than from a cache that may not have seen
	// it yet; nil reads through Client.
	Reader client.Reader
	Clock  clock.PassiveClock
	// RevisionLabel is the pod label that names a pod's revision.
	RevisionLabel string
	// RevisionValue turns a revision name into the label value (e.g. the short hash); nil keeps
	// the name.
	RevisionValue func(string) string
}

// grace is what the grace annotation holds while images wait for the grace period.
type grace struct {
	Revision           string                                 `json:"revision"`
	ContainerImages    map[string]string                      `json:"containerImages"`
	ContainerResources map[string]corev1.ResourceRequirements `json:"containerResources,omitempty"`
	GraceSeconds       int32                                  `json:"graceSeconds"`
}

// InjectReadinessGate adds the InPlaceUpdateReady readiness gate to a pod that is about to be
// created, so that an in-place update can take it out of Service endpoints.
func InjectReadinessGate(pod *corev1.Pod) {
	podcondition.AddGate(pod, appspub.InPlaceUpdateReady)
}

// HasReadinessGate reports whether pod carries the InPlaceUpdateReady gate.
func HasReadinessGate(pod *corev1.Pod) bool {
	return podcondition.HasGate(pod, appspub.InPlaceUpdateReady)
}

// Condition returns the pod's InPlaceUpdateReady condition, or nil.
func Condition(pod *corev1.Pod) *corev1.PodCondition {
	return podcondition.Get(pod, appspub.InPlaceUpdateReady)
}

// NotUnready is false while the pod's InPlaceUpdateReady condition is False: the workload has
// taken the pod out of service for an in-place update. A pod without the condition is not held.
func NotUnready(pod *corev1.Pod) bool {
	c := Condition(pod)
	return c == nil || c.Status != corev1.ConditionFalse
}

// State returns the pod's recorded in-place update state, or nil.
func State(pod *corev1.Pod) (*appspub.InPlaceUpdateState, error) {
	v, ok := appspub.GetInPlaceUpdateState(pod)
	if !ok || v == "" {
		return nil, nil
	}
	var s appspub.InPlaceUpdateState
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return nil, fmt.Errorf("read %s: %w", appspub.InPlaceUpdateStateKey, err)
	}
	return &s, nil
}

// Update starts moving pod to the plan's revision in place. It returns the updated pod.
//
// The spec and metadata go in one strategic merge patch written straight from the plan
// (change.patch): the images, labels and annotations the plan changes and the in-place state,
// nothing else, so nothing the kubelet or anyone else wrote meanwhile is overwritten. The patch
// carries the pod's UID but no resourceVersion: taking the pod out of service makes the kubelet
// write its Ready condition at that very moment, and a write carrying the resourceVersion
// conflicted with it for about every pod. The UID keeps it off a pod recreated under the same
// name.
//
// New cpu and memory requests and limits go first, through the pod's resize subresource (the
// only way the apiserver takes them), so that an update whose patch failed after the resize is
// planned and written again, rather than recorded as started with resources never written. A
// plan that StaysInService leaves InPlaceUpdateReady alone.
func (u *Updater) Update(ctx context.Context, pod *corev1.Pod, plan *Plan) (*corev1.Pod, error) {
	now := metav1.NewTime(u.Clock.Now())
	cur := pod
	if HasReadinessGate(pod) && !plan.StaysInService {
		written, err := u.setCondition(ctx, pod, corev1.ConditionFalse, ReasonStarted, now)
		if err != nil {
			return nil, err
		}
		cur = written
	}
	c, resources, err := u.planChange(cur, plan, now)
	if err != nil {
		return nil, fmt.Errorf("update pod %s in place: %w", pod.Name, err)
	}
	if err := u.resize(ctx, cur, resources); err != nil {
		return nil, fmt.Errorf("update pod %s in place: %w", pod.Name, err)
	}
	out, err := u.write(ctx, cur, c)
	if err != nil {
		return nil, fmt.Errorf("update pod %s in place: %w", pod.Name, err)
	}
	return out, nil
}

// resize writes new cpu and memory requests and limits, by container name, through the pod's
// resize subresource; it writes nothing when there are none. The patch names the pod's UID, as
// the other in-place writes do: the resize subresource keeps the patched metadata's UID and
// refuses a change of it, so a pod recreated under the same name is not resized.
func (u *Updater) resize(ctx context.Context, pod *corev1.Pod, resources map[string]corev1.ResourceRequirements) error {
	if len(resources) == 0 {
		return nil
	}
	type container struct {
		Name      string                      `json:"name"`
		Resources corev1.ResourceRequirements `json:"resources"`
	}
	var containers []container
	for _, c := range pod.Spec.Containers {
		if r, ok := resources[c.Name]; ok {
			containers = append(containers, container{Name: c.Name, Resources: r})
		}
	}
	raw, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": string(pod.UID)},
		"spec":     map[string]any{"containers": containers},
	})
	if err != nil {
		return err
	}
	if err := u.Client.SubResource("resize").Patch(ctx, pod.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
		return fmt.Errorf("resize containers: %w", err)
	}
	return nil
}

// change is what one in-place write sets on a pod.
type change struct {
	// Labels and Annotations are set to their values; a nil value removes the key.
	Labels, Annotations map[string]*string
	// Images are the new images, by container name.
	Images map[string]string
}

// patch is the strategic merge patch that makes change c on pod: the labels, annotations and
// images, the containers merged by name in the pod's order, plus the pod's UID, which cannot
// change, so the apiserver refuses the patch if the pod by that name is another one.
func (c change) patch(pod *corev1.Pod) ([]byte, error) {
	meta := map[string]any{"uid": string(pod.UID)}
	if len(c.Labels) > 0 {
		meta["labels"] = c.Labels
	}
	if len(c.Annotations) > 0 {
		meta["annotations"] = c.Annotations
	}
	patch := map[string]any{"metadata": meta}
	type container struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
	var containers []container
	for _, ct := range pod.Spec.Containers {
		if img, ok := c.Images[ct.Name]; ok {
			containers = append(containers, container{Name: ct.Name, Image: img})
		}
	}
	if len(containers) > 0 {
		patch["spec"] = map[string]any{"containers": containers}
	}
	return json.Marshal(patch)
}

// write patches change c onto pod and returns the pod as written.
func (u *Updater) write(ctx context.Context, pod *corev1.Pod, c change) (*corev1.Pod, error) {
	raw, err := c.patch(pod)
	if err != nil {
		return nil, err
	}
	out := pod.DeepCopy()
	if err := u.Client.Patch(ctx, out, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
		return nil, err
	}
	return out, nil
}

// planChange is the change that starts plan on pod, and the resources to resize now, which the
// pod spec cannot take through a patch (see resize); none while a grace period holds them.
func (u *Updater) planChange(pod *corev1.Pod, plan *Plan, now metav1.Time) (change, map[string]corev1.ResourceRequirements, error) {
	// Labels and annotations that only containers of a later batch read wait for that batch.
	b := planBatch(pod.Spec.Containers, plan.ContainerImages, plan.ContainerRefMetadata, plan.ContainerResources)
	laterLabels, laterAnnotations := map[string]bool{}, map[string]bool{}
	for _, meta := range b.NextRefMetadata {
		for k := range meta.Labels {
			laterLabels[k] = true
		}
		for k := range meta.Annotations {
			laterAnnotations[k] = true
		}
	}
	c := change{Labels: map[string]*string{}, Annotations: map[string]*string{}}
	for k, v := range plan.Labels {
		if !laterLabels[k] {
			c.Labels[k] = v
		}
	}
	for k, v := range plan.Annotations {
		if !laterAnnotations[k] {
			c.Annotations[k] = v
		}
	}
	c.Labels[u.RevisionLabel] = ptr.To(u.revisionValue(plan.Revision))

	state := appspub.InPlaceUpdateState{
		Revision:              plan.Revision,
		UpdateTimestamp:       now,
		LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{},
		UpdateEnvFromMetadata: plan.UpdateEnvFromMetadata,
		UpdateImages:          len(plan.ContainerImages) > 0,
		UpdateResources:       len(plan.ContainerResources) > 0,
	}
	b.record(pod, &state, now)
	if err := c.setState(&state); err != nil {
		return change{}, nil, err
	}
	if _, ok := pod.Annotations[appspub.InPlaceUpdateGraceKey]; ok {
		c.Annotations[appspub.InPlaceUpdateGraceKey] = nil
	}

	if plan.GraceSeconds > 0 && (len(b.Images) > 0 || len(b.Resources) > 0) {
		raw, err := json.Marshal(grace{Revision: plan.Revision, ContainerImages: b.Images, ContainerResources: b.Resources, GraceSeconds: plan.GraceSeconds})
		if err != nil {
			return change{}, nil, err
		}
		c.Annotations[appspub.InPlaceUpdateGraceKey] = ptr.To(string(raw))
		return c, nil, nil
	}
	c.Images = b.Images
	return c, b.Resources, nil
}

// setState records state in the in-place state annotation.
func (c change) setState(state *appspub.InPlaceUpdateState) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return err
	}
	c.Annotations[appspub.InPlaceUpdateStateKey] = ptr.To(string(raw))
	return nil
}

func writeState(pod *corev1.Pod, state *appspub.InPlaceUpdateState) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return err
	}
	pod.Annotations[appspub.InPlaceUpdateStateKey] = string(raw)
	return nil
}

// updateNextBatch writes the next batch of an in-place update under container launch priority:
// its images and the labels and annotations its containers read, recorded in the state.
func (u *Updater) updateNextBatch(ctx context.Context, pod *corev1.Pod, state *appspub.InPlaceUpdateState) (*corev1.Pod, error) {
	b := planBatch(pod.Spec.Containers, state.NextContainerImages, state.NextContainerRefMetadata, state.NextContainerResources)
	c := change{Labels: map[string]*string{}, Annotations: map[string]*string{}, Images: b.Images}
	b.addRefMetadata(c)
	s := *state
	b.record(pod, &s, metav1.NewTime(u.Clock.Now()))
	if err := c.setState(&s); err != nil {
		return nil, err
	}
	if err := u.resize(ctx, pod, b.Resources); err != nil {
		return nil, fmt.Errorf("update containers %v of pod %s in place: %w", b.Containers, pod.Name, err)
	}
	out, err := u.write(ctx, pod, c)
	if err != nil {
		return nil, fmt.Errorf("update containers %v of pod %s in place: %w", b.Containers, pod.Name, err)
	}
	return out, nil
}

func (u *Updater) revisionValue(name string) string {
	if u.RevisionValue == nil {
		return name
	}
	return u.RevisionValue(name)
}

func setImages(pod *corev1.Pod, images map[string]string) {
	for i := range pod.Spec.Containers {
		if img, ok := images[pod.Spec.Containers[i].Name]; ok {
			pod.Spec.Containers[i].Image = img
		}
	}
}

// Result is what Refresh found.
type Result struct {
	// Updating is true while an in-place update of the pod has not finished.
	Updating bool
	// RequeueAfter is set while a grace period runs.
	RequeueAfter time.Duration
	// Written is the pod as Refresh wrote it when it started the next batch of containers, for
	// the workload's expectations; nil when it wrote no batch.
	Written *corev1.Pod
}

// Refresh moves an in-place update along: it applies images whose grace period has passed, and
// once every updated container runs its new image it sets InPlaceUpdateReady True. It also sets
// a False condition True when no update is under way. A new pod that carries the gate but no
// condition is left to the pod readiness controller.
func (u *Updater) Refresh(ctx context.Context, pod *corev1.Pod) (Result, error) {
	if v, ok := pod.Annotations[appspub.InPlaceUpdateGraceKey]; ok {
		return u.refreshGrace(ctx, pod, v)
	}
	state, err := State(pod)
	if err != nil {
		return Result{}, err
	}
	if state != nil && !containersUpdated(pod, state) {
		return Result{Updating: true}, nil
	}
	// Under container launch priority, the next batch goes once the last one's containers run
	// their new spec and are ready.
	if state != nil && hasNext(state) {
		if !readyForNext(pod, state.PreCheckBeforeNext) {
			return Result{Updating: true}, nil
		}
		written, err := u.updateNextBatch(ctx, pod, state)
		if err != nil {
			return Result{}, err
		}
		return Result{Updating: true, Written: written}, nil
	}
	// A new pod (no update ever started, no condition yet) gets its first condition from the
	// pod readiness controller, together with KruisePodReady, in one write.
	c := Condition(pod)
	if HasReadinessGate(pod) && (state != nil || c != nil) && (c == nil || c.Status != corev1.ConditionTrue) {
		if _, err := u.setCondition(ctx, pod, corev1.ConditionTrue, ReasonCompleted, metav1.NewTime(u.Clock.Now())); err != nil {
			return Result{}, err
		}
	}
	return Result{}, nil
}

func (u *Updater) refreshGrace(ctx context.Context, pod *corev1.Pod, raw string) (Result, error) {
	var g grace
	if err := json.Unmarshal([]byte(raw), &g); err != nil {
		return Result{}, fmt.Errorf("read %s: %w", appspub.InPlaceUpdateGraceKey, err)
	}
	state, err := State(pod)
	if err != nil {
		return Result{}, err
	}
	started := u.Clock.Now()
	if state != nil {
		started = state.UpdateTimestamp.Time
	}
	if left := started.Add(time.Duration(g.GraceSeconds) * time.Second).Sub(u.Clock.Now()); left > 0 {
		return Result{Updating: true, RequeueAfter: left}, nil
	}
	// The resources go first, as in Update: a resize written twice changes nothing.
	if err := u.resize(ctx, pod, g.ContainerResources); err != nil {
		return Result{}, fmt.Errorf("apply resources after grace period on pod %s: %w", pod.Name, err)
	}
	first := true
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur := pod.DeepCopy()
		if !first {
			cur = &corev1.Pod{}
			if err := u.reader().Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
				return err
			}
		}
		first = false
		if _, ok := cur.Annotations[appspub.InPlaceUpdateGraceKey]; !ok {
			return nil
		}
		setImages(cur, g.ContainerImages)
		delete(cur.Annotations, appspub.InPlaceUpdateGraceKey)
		// The first batch is written now, not when the update started: its record says so.
		if s, err := State(cur); err == nil && s != nil && len(s.ContainerBatchesRecord) > 0 {
			s.ContainerBatchesRecord[len(s.ContainerBatchesRecord)-1].Timestamp = metav1.NewTime(u.Clock.Now())
			if err := writeState(cur, s); err != nil {
				return err
			}
		}
		return u.Client.Update(ctx, cur)
	})
	if err != nil {
		return Result{}, fmt.Errorf("apply images after grace period on pod %s: %w", pod.Name, err)
	}
	return Result{Updating: true}, nil
}

// Completed reports whether the in-place update has finished: no batch of containers waits
// (container launch priority) and the containers changed so far run their new spec
// (containersUpdated).
func Completed(pod *corev1.Pod, state *appspub.InPlaceUpdateState) bool {
	return !hasNext(state) && containersUpdated(pod, state)
}

// ContainersUpdated reports whether the containers an in-place update changed so far run their
// new spec (containersUpdated); unlike Completed it does not wait for a next batch.
func ContainersUpdated(pod *corev1.Pod, state *appspub.InPlaceUpdateState) bool {
	return containersUpdated(pod, state)
}

// containersUpdated reports whether every container the update changed so far runs the image
// the spec asks for, shown by the kubelet's hashes in runtime-containers-meta, or else by a new
// image ID or, when the new image has the old one's ID, by the status image; and, for an update
// that changes env from metadata, whether every container runs with the env the pod's metadata
// now gives (envFromMetadataApplied).
func containersUpdated(pod *corev1.Pod, state *appspub.InPlaceUpdateState) bool {
	if _, waiting := pod.Annotations[appspub.InPlaceUpdateGraceKey]; waiting {
		return false
	}
	if state.UpdateEnvFromMetadata && !envFromMetadataApplied(pod) {
		return false
	}
	// As in 1.8, a resize is finished only when the kubelet reports the spec's resources.
	if state.UpdateResources && !resourcesReported(pod) {
		return false
	}
	// As in 1.8, the kubelet's own hashes, when kruise-daemon reports them, settle it.
	if kubeletHashesMatch(pod) {
		return true
	}
	spec := map[string]string{}
	for _, c := range pod.Spec.Containers {
		spec[c.Name] = c.Image
	}
	for _, cs := range pod.Status.ContainerStatuses {
		last, ok := state.LastContainerStatuses[cs.Name]
		if !ok {
			continue
		}
		if cs.ImageID == "" || !sameImage(spec[cs.Name], cs.Image) {
			return false
		}
		// An unchanged image ID is a finished update only when the status names the spec's new
		// image, as in 1.8: two tags of one image (nginx:alpine and nginx:mainline-alpine) share
		// the image ID, and the status image is all that shows the container was recreated.
		if cs.ImageID == last.ImageID && !reportsImage(spec[cs.Name], cs.Image) {
			return false
		}
	}
	return true
}

// resourcesReported reports whether the kubelet reports, in status.containerStatuses[].resources,
// the cpu and memory requests and limits the spec of every container asks for, the check 1.8
// makes before it counts a resize as done.
func resourcesReported(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		var reported *corev1.ResourceRequirements
		for i := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[i].Name == c.Name {
				reported = pod.Status.ContainerStatuses[i].Resources
			}
		}
		if reported == nil || !sameResizable(c.Resources.Requests, reported.Requests) || !sameResizable(c.Resources.Limits, reported.Limits) {
			return false
		}
	}
	return true
}

// sameResizable tells whether the reported list holds the cpu and memory quantities the spec's
// list asks for (what the spec leaves unset, the kubelet may report or not).
func sameResizable(spec, reported corev1.ResourceList) bool {
	for name := range resizable {
		want, set := spec[name]
		if !set {
			continue
		}
		if got, ok := reported[name]; !ok || got.Cmp(want) != 0 {
			return false
		}
	}
	return true
}

// envFromMetadataApplied reports whether kruise-daemon's apps.kruise.io/runtime-containers-meta
// shows, for the container ID the pod status reports for each container, the env-from-metadata
// hash that the pod's current labels and annotations give. The daemon hashes a container's env
// once per container ID, so a match means the running container was started with the new values.
func envFromMetadataApplied(pod *corev1.Pod) bool {
	return runtimeMetaShows(pod, func(c *corev1.Container, h appspub.RuntimeContainerHashes) bool {
		return h.ExtractedEnvFromMetadataHash == envhash.Expected(c, pod)
	})
}

// kubeletHashesMatch reports whether runtime-containers-meta shows, for the container ID the pod
// status reports for each container, the kubelet's hash of the container's spec: every running
// container was started from the spec as it is, whatever image name the runtime reports (a
// runtime reports an image by the first of its tags, so two tags of one image look alike).
func kubeletHashesMatch(pod *corev1.Pod) bool {
	return runtimeMetaShows(pod, func(c *corev1.Container, h appspub.RuntimeContainerHashes) bool {
		return h.PlainHash == kubeletHash(c)
	})
}

// kubeletHash is the hash the kubelet labels a container with (io.kubernetes.container.hash),
// which kruise-daemon copies into runtime-containers-meta as plainHash: FNV-32a over the dump of
// the JSON of the container's name and image, as kubelets of Kubernetes 1.31 and later compute
// it. Older kubelets hash more fields; their hashes never match, and completion falls back to
// the images.
func kubeletHash(c *corev1.Container) uint64 {
	b, _ := json.Marshal(map[string]string{"name": c.Name, "image": c.Image})
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(b))
	return uint64(h.Sum32())
}

// runtimeMetaShows reports whether runtime-containers-meta has, for every container of the spec,
// an entry for the container ID the pod status reports whose hashes match says.
func runtimeMetaShows(pod *corev1.Pod, match func(*corev1.Container, appspub.RuntimeContainerHashes) bool) bool {
	raw, ok := pod.Annotations[appspub.RuntimeContainerMetaKey]
	if !ok {
		return false
	}
	var set appspub.RuntimeContainerMetaSet
	if err := json.Unmarshal([]byte(raw), &set); err != nil {
		return false
	}
	ids := map[string]string{}
	for _, cs := range pod.Status.ContainerStatuses {
		ids[cs.Name] = cs.ContainerID
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		var meta *appspub.RuntimeContainerMeta
		for j := range set.Containers {
			if set.Containers[j].Name == c.Name {
				meta = &set.Containers[j]
			}
		}
		if meta == nil || ids[c.Name] == "" || meta.ContainerID != ids[c.Name] || !match(c, meta.Hashes) {
			return false
		}
	}
	return true
}

// sameImage compares a spec image with a status image. Runtimes may report the image with the
// default registry and repository prefix spelled out, so both are compared in their canonical
// form; a status image that does not parse (a bare digest, say) counts as the same.
func sameImage(spec, status string) bool {
	if spec == status || status == "" {
		return true
	}
	a, errA := name.ParseReference(spec, name.WeakValidation)
	b, errB := name.ParseReference(status, name.WeakValidation)
	if errA != nil || errB != nil {
		return true
	}
	return a.Name() == b.Name()
}

// reportsImage tells a status image that names the spec image, in canonical form: unlike
// sameImage, an empty or unparsable status image does not count.
func reportsImage(spec, status string) bool {
	if status == "" {
		return false
	}
	if spec == status {
		return true
	}
	a, errA := name.ParseReference(spec, name.WeakValidation)
	b, errB := name.ParseReference(status, name.WeakValidation)
	return errA == nil && errB == nil && a.Name() == b.Name()
}

// reader is where a retry after a conflict reads the pod.
func (u *Updater) reader() client.Reader {
	if u.Reader != nil {
		return u.Reader
	}
	return u.Client
}

// setCondition writes InPlaceUpdateReady and returns the pod as written (or as it was, when it
// already had that status). The workload is the condition's only writer, so the write carries
// no resourceVersion and never conflicts with the kubelet's status writes.
func (u *Updater) setCondition(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason string, now metav1.Time) (*corev1.Pod, error) {
	if c := Condition(pod); c != nil && c.Status == status {
		return pod, nil
	}
	out, err := podcondition.PatchOwn(ctx, u.Client, pod, corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: status, Reason: reason, LastTransitionTime: now})
	if err != nil {
		return nil, fmt.Errorf("set %s=%s on pod %s: %w", appspub.InPlaceUpdateReady, status, pod.Name, err)
	}
	return out, nil
}

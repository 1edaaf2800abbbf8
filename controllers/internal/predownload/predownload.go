package predownload

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
)

// MinReplicas is the size at or below which a workload never pre-downloads: its update is over
// before a pull job would help.
const MinReplicas = 3

// Defaults of the jobs, which the workload's annotations can change.
const (
	defaultTimeoutSeconds = 300
	defaultParallelism    = 1
	jobBackoffLimit       = 1
	jobTTLSeconds         = 600
)

// Workload is what a decision needs to know of the workload being updated.
type Workload struct {
	// Owner is the workload: it owns the jobs, and its annotations tune them.
	Owner client.Object
	// GVK is the owner's kind, for the jobs' owner reference.
	GVK schema.GroupVersionKind
	// Selector is the workload's pod selector.
	Selector *metav1.LabelSelector
	// Template is the update revision's pod template: its labels, annotations and pull secrets
	// go to the jobs.
	Template *corev1.PodTemplateSpec
	// Replicas, Partition and MaxUnavailable are the update's figures, resolved to pod counts.
	Replicas, Partition, MaxUnavailable int
	// Recreate is set when the update strategy always recreates pods.
	Recreate bool
	// CanInPlace reports whether pods can move from the current to the update revision in place.
	CanInPlace bool
	// UpdatedReadyReplicas counts ready pods of the update revision.
	UpdatedReadyReplicas int
	// AnyUpdate is set for a workload that pre-downloads for every update, whatever its size,
	// strategy or route and without waiting for updated ready pods: only an update of every pod
	// in one batch is ignored (Advanced DaemonSet, as in 1.8).
	AnyUpdate bool
}

// Outcome is what Decide chose for an update revision.
type Outcome string

const (
	// Decided: the revision carries its decision already; nothing to do.
	Decided Outcome = "Decided"
	// Ignore: this revision is not pre-downloaded; the revision is labelled so.
	Ignore Outcome = "Ignore"
	// Wait: too few updated pods are ready yet (the min-updated-ready-pods annotation).
	Wait Outcome = "Wait"
	// Create: create the jobs, then label the revision.
	Create Outcome = "Create"
)

// IsDecided reports whether the update revision carries its pre-download decision already, so
// that a caller can skip building a Workload (decoding templates, comparing revisions) on every
// reconcile of a rollout.
func IsDecided(update *appsv1.ControllerRevision) bool {
	_, created := update.Labels[appsv1alpha1.ImagePreDownloadCreatedKey]
	_, ignored := update.Labels[appsv1alpha1.ImagePreDownloadIgnoredKey]
	return created || ignored
}

// Decide chooses, for the update revision, whether the workload pre-downloads its images, and
// why not when it does not.
func Decide(w Workload, update *appsv1.ControllerRevision) (Outcome, string) {
	if IsDecided(update) {
		return Decided, "the revision carries its decision"
	}
	oneBatch := w.Partition == 0 && w.MaxUnavailable >= w.Replicas
	if w.AnyUpdate {
		if oneBatch {
			return Ignore, "every pod updates in one batch"
		}
		return Create, ""
	}
	if raw, ok := w.Owner.GetAnnotations()[appsv1alpha1.ImagePreDownloadMinUpdatedReadyPods]; ok {
		v := intstr.Parse(raw)
		if min, err := intstr.GetScaledValueFromIntOrPercent(&v, w.Replicas, true); err == nil && w.UpdatedReadyReplicas < min {
			return Wait, fmt.Sprintf("%d of the %d updated ready pods it waits for", w.UpdatedReadyReplicas, min)
		}
	}
	switch {
	case w.Recreate:
		return Ignore, "the update strategy recreates pods"
	case w.Replicas <= MinReplicas:
		return Ignore, fmt.Sprintf("%d replicas are no more than %d", w.Replicas, MinReplicas)
	case oneBatch:
		return Ignore, "every pod updates in one batch"
	case !w.CanInPlace:
		return Ignore, "the revision cannot update in place"
	}
	return Create, ""
}

// ChangedImages returns, by container name, the image of each container of newT whose image
// differs from oldT's, or that oldT does not have.
func ChangedImages(oldT, newT *corev1.PodTemplateSpec) map[string]string {
	return ChangedSince(newT, oldT)
}

// ChangedSince returns, by container name, the image of each container of newT whose image
// differs from that of the same container in any of olds, or that none of olds has: the images
// some pod of an old revision still lacks.
func ChangedSince(newT *corev1.PodTemplateSpec, olds ...*corev1.PodTemplateSpec) map[string]string {
	out := map[string]string{}
	for _, c := range newT.Spec.Containers {
		found := false
		for _, oldT := range olds {
			for _, oc := range oldT.Spec.Containers {
				if oc.Name != c.Name {
					continue
				}
				found = true
				if oc.Image != c.Image {
					out[c.Name] = c.Image
				}
			}
		}
		if !found {
			out[c.Name] = c.Image
		}
	}
	return out
}

// Jobs builds the pull jobs of an update revision, one per changed image, sorted by name. They
// pull on the nodes of the workload's pods that do not run the update revision yet.
func Jobs(w Workload, update *appsv1.ControllerRevision, images map[string]string) []*appsv1alpha1.ImagePullJob {
	ann := w.Owner.GetAnnotations()
	timeout := int32(defaultTimeoutSeconds)
	if v, err := strconv.ParseInt(ann[appsv1alpha1.ImagePreDownloadTimeoutSecondsKey], 10, 32); err == nil && v > 0 {
		timeout = int32(v)
	}
	parallelism := intstr.FromInt32(defaultParallelism)
	if v, err := strconv.ParseInt(ann[appsv1alpha1.ImagePreDownloadParallelismKey], 10, 32); err == nil && v > 0 {
		parallelism = intstr.FromInt32(int32(v))
	}
	hash := update.Labels[appsv1.ControllerRevisionHashLabelKey]
	selector := metav1.LabelSelector{}
	if w.Selector != nil {
		selector = *w.Selector.DeepCopy()
	}
	notUpdated := []string{update.Name}
	if hash != "" && hash != update.Name {
		notUpdated = append(notUpdated, hash)
	}
	selector.MatchExpressions = append(selector.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: appsv1.ControllerRevisionHashLabelKey, Operator: metav1.LabelSelectorOpNotIn, Values: notUpdated,
	})
	// The jobs carry the template's labels, so that they match the workload's selector like
	// everything else it owns.
	labels := map[string]string{}
	for k, v := range w.Template.Labels {
		labels[k] = v
	}
	if hash != "" {
		labels[appsv1.ControllerRevisionHashLabelKey] = hash
	}
	var secrets []string
	for _, s := range w.Template.Spec.ImagePullSecrets {
		secrets = append(secrets, s.Name)
	}
	names := make([]string, 0, len(images))
	for c := range images {
		names = append(names, c)
	}
	sort.Strings(names)
	out := make([]*appsv1alpha1.ImagePullJob, 0, len(names))
	for _, c := range names {
		job := &appsv1alpha1.ImagePullJob{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       w.Owner.GetNamespace(),
				Name:            update.Name + "-" + c,
				Labels:          copyMap(labels),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(w.Owner, w.GVK)},
			},
			Spec: appsv1alpha1.ImagePullJobSpec{Image: images[c]},
		}
		job.Spec.PullSecrets = secrets
		job.Spec.PodSelector = &appsv1alpha1.ImagePullJobPodSelector{LabelSelector: *selector.DeepCopy()}
		job.Spec.Parallelism = ptr.To(parallelism)
		job.Spec.PullPolicy = &appsv1alpha1.PullPolicy{BackoffLimit: ptr.To[int32](jobBackoffLimit), TimeoutSeconds: ptr.To(timeout)}
		job.Spec.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Always, TTLSecondsAfterFinished: ptr.To[int32](jobTTLSeconds)}
		job.Spec.SandboxConfig = &appsv1alpha1.SandboxConfig{Labels: copyMap(labels), Annotations: copyMap(w.Template.Annotations)}
		out = append(out, job)
	}
	return out
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Syncer creates and removes a workload's pre-download jobs.
type Syncer struct {
	Client   client.Client
	Recorder record.EventRecorder
}

// Sync carries out Decide for an update revision whose pods differ from older ones: it creates
// the jobs for images, the changed images by container name (ChangedImages, ChangedSince), or
// records that there are none, as a label on the revision.
func (s Syncer) Sync(ctx context.Context, w Workload, update *appsv1.ControllerRevision, images map[string]string) error {
	log := klog.FromContext(ctx)
	outcome, why := Decide(w, update)
	switch outcome {
	case Decided, Wait:
		return nil
	case Ignore:
		log.V(4).Info("no image pre-download for this revision", "revision", update.Name, "reason", why)
		return s.label(ctx, update, appsv1alpha1.ImagePreDownloadIgnoredKey)
	}
	for _, job := range Jobs(w, update, images) {
		if err := s.Client.Create(ctx, job); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			s.event(w.Owner, corev1.EventTypeWarning, "FailedCreateImagePullJob", "failed to create ImagePullJob %s: %v", job.Name, err)
			return fmt.Errorf("create ImagePullJob %s: %w", job.Name, err)
		}
		s.event(w.Owner, corev1.EventTypeNormal, "CreatedImagePullJob", "created ImagePullJob %s for image: %s", job.Name, job.Spec.Image)
	}
	return s.label(ctx, update, appsv1alpha1.ImagePreDownloadCreatedKey)
}

// Cleanup deletes the pull jobs the workload owns, once its revisions agree again.
func (s Syncer) Cleanup(ctx context.Context, owner metav1.Object) error {
	jobs := &appsv1alpha1.ImagePullJobList{}
	if err := s.Client.List(ctx, jobs, client.InNamespace(owner.GetNamespace())); err != nil {
		return fmt.Errorf("list ImagePullJobs: %w", err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != owner.GetUID() {
			continue
		}
		if err := s.Client.Delete(ctx, job); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ImagePullJob %s: %w", job.Name, err)
		}
	}
	return nil
}

func (s Syncer) label(ctx context.Context, rev *appsv1.ControllerRevision, key string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{key: "true"}}})
	if err != nil {
		return err
	}
	if err := s.Client.Patch(ctx, rev, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("label revision %s %s: %w", rev.Name, key, err)
	}
	return nil
}

func (s Syncer) event(obj client.Object, kind, reason, format string, args ...any) {
	if s.Recorder != nil {
		s.Recorder.Eventf(obj, kind, reason, format, args...)
	}
}

// Rollout is a workload's rollout as SyncRollout sees it.
type Rollout struct {
	// Owner is the workload.
	Owner client.Object
	// Current and Update are the workload's current and update revisions.
	Current, Update *appsv1.ControllerRevision
	// StatusUpdateRevision and StatusUpdatedReady are the status's updateRevision and
	// updatedReadyReplicas: the count stands for Update only while the status names it.
	StatusUpdateRevision string
	StatusUpdatedReady   int32
	// Decide decides how pods at a revision reach Update, as the workload's plan does.
	Decide func(from string) (inplaceupdate.Decision, error)
}

// SyncRollout creates the pull jobs of the update revision while the revisions differ, and
// deletes the owner's jobs once they agree. build gives the Workload's figures; it is called
// only while the update revision has no decision yet. SyncRollout fills in the rest: whether
// pods of the current revision go in place, and the updated ready count.
func (s Syncer) SyncRollout(ctx context.Context, r Rollout, build func() Workload) error {
	if r.Current.Name == r.Update.Name {
		return s.Cleanup(ctx, r.Owner)
	}
	if IsDecided(r.Update) {
		return nil
	}
	route, err := r.Decide(r.Current.Name)
	if err != nil {
		return err
	}
	oldT, err := inplaceupdate.SpecTemplate(r.Current)
	if err != nil {
		return err
	}
	newT, err := inplaceupdate.SpecTemplate(r.Update)
	if err != nil {
		return err
	}
	w := build()
	w.CanInPlace = route.Route == inplaceupdate.RouteInPlace
	w.UpdatedReadyReplicas = 0
	if r.StatusUpdateRevision == r.Update.Name {
		w.UpdatedReadyReplicas = int(r.StatusUpdatedReady)
	}
	return s.Sync(ctx, w, r.Update, ChangedImages(oldT, newT))
}

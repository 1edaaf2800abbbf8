package daemonset

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// TestPreDownloadImageForDaemonSetUpdate: with the gate on, an image change of an Advanced
// DaemonSet whose partition holds nodes back creates the ImagePullJob
// <update revision>-<container> that 1.8 creates: labelled with the template's labels and the
// revision hash, controlled by the DaemonSet, pulling the new image with the DaemonSet's
// parallelism and timeout annotations onto the nodes of its pods not at the update revision,
// once (completionPolicy Always, 600s TTL), with the template's pull secrets, labels and
// annotations in its sandbox. The revision is labelled as pre-downloaded; once every node runs
// the new revision the job is deleted.
func TestPreDownloadImageForDaemonSetUpdate(t *testing.T) {
	ns := newNamespace(t)
	ds := kinds.DaemonSet("pull", ns).Image(imageV1).Partition(3).Obj()
	ds.Annotations = map[string]string{
		appsv1alpha1.ImagePreDownloadParallelismKey:    "2",
		appsv1alpha1.ImagePreDownloadTimeoutSecondsKey: "120",
	}
	ds.Spec.Template.Annotations = map[string]string{"team": "infra"}
	ds.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull-secret"}}
	createDaemonSet(t, ds)
	nodes := baseNodeNames()
	waitRolledOut(t, ns, "pull", imageV1, nodes, framework.Medium)
	old := dsRevision(t, ns, "pull")

	change(t, ns, "pull", setImage(imageV2))
	pre := dsPreDownload(ns, "pull", old)
	job, update := pre.Job(t)
	rev := framework.Get[appsv1.ControllerRevision](t, env.Client, client.ObjectKey{Namespace: ns, Name: update})
	hash := rev.Labels[appsv1.ControllerRevisionHashLabelKey]
	labels := map[string]string{"app": "pull", appsv1.ControllerRevisionHashLabelKey: hash}

	want := appsv1alpha1.ImagePullJobSpec{Image: imageV2}
	want.PullSecrets = []string{"pull-secret"}
	want.PodSelector = &appsv1alpha1.ImagePullJobPodSelector{LabelSelector: metav1.LabelSelector{
		MatchLabels: map[string]string{"app": "pull"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: appsv1.ControllerRevisionHashLabelKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{update, hash},
		}},
	}}
	want.Parallelism = ptr.To(intstr.FromInt32(2))
	want.PullPolicy = &appsv1alpha1.PullPolicy{BackoffLimit: ptr.To[int32](1), TimeoutSeconds: ptr.To[int32](120)}
	want.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Always, TTLSecondsAfterFinished: ptr.To[int32](600)}
	want.SandboxConfig = &appsv1alpha1.SandboxConfig{Labels: labels, Annotations: map[string]string{"team": "infra"}}
	want.ImagePullPolicy = appsv1alpha1.PullIfNotPresent // the CRD's default, as in 1.8
	testkit.Diff(t, "job spec", want, job.Spec)
	testkit.Diff(t, "job labels", labels, job.Labels)
	ds = getDaemonSet(t, ns, "pull")
	wantOwner := []metav1.OwnerReference{{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "DaemonSet", Name: "pull", UID: ds.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	testkit.Diff(t, "job owner", wantOwner, job.OwnerReferences)
	if rev.Labels[appsv1alpha1.ImagePreDownloadCreatedKey] != "true" {
		t.Errorf("revision labels %v lack %s", rev.Labels, appsv1alpha1.ImagePreDownloadCreatedKey)
	}
	framework.WaitForEvent(t, env.Client, ns, framework.Medium, "the DaemonSet's CreatedImagePullJob event", func(e *corev1.Event) bool {
		return e.InvolvedObject.Name == "pull" && e.Reason == "CreatedImagePullJob" && e.Type == corev1.EventTypeNormal &&
			e.Message == fmt.Sprintf("created ImagePullJob %s for image: %s", job.Name, imageV2)
	})

	change(t, ns, "pull", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0) })
	waitRolledOut(t, ns, "pull", imageV2, nodes, rollout)
	pre.WaitJobsDeleted(t)
}

// TestNoPreDownloadWhenEveryDaemonPodUpdatesInOneBatch: with no partition and a maxUnavailable
// of every node, an image change creates no job, and the revision says it was ignored.
func TestNoPreDownloadWhenEveryDaemonPodUpdatesInOneBatch(t *testing.T) {
	ns := newNamespace(t)
	createDaemonSet(t, kinds.DaemonSet("batch", ns).Image(imageV1).MaxUnavailable(intstr.FromString("100%")).Obj())
	waitRolledOut(t, ns, "batch", imageV1, baseNodeNames(), framework.Medium)
	old := dsRevision(t, ns, "batch")
	change(t, ns, "batch", setImage(imageV2))
	pre := dsPreDownload(ns, "batch", old)
	pre.WaitIgnored(t, "batch")
	var jobs appsv1alpha1.ImagePullJobList
	if err := env.Client.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("%d pre-download jobs, e.g. %s, want none", len(jobs.Items), jobs.Items[0].Name)
	}
}

// dsRevision is the name of the revision the DaemonSet's status names by its hash, once the
// status has seen the latest generation.
func dsRevision(t *testing.T, ns, name string) string {
	t.Helper()
	var rev string
	framework.Eventually(t, framework.Medium, "the revision of "+name+"'s status", func(ctx context.Context) error {
		var err error
		rev, err = statusRevision(ctx, ns, name)
		return err
	})
	return rev
}

// statusRevision is the name of the ControllerRevision whose hash the DaemonSet's status names;
// an error until the status has seen the latest generation.
func statusRevision(ctx context.Context, ns, name string) (string, error) {
	ds := &appsv1alpha1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ds); err != nil {
		return "", err
	}
	if ds.Status.ObservedGeneration < ds.Generation || ds.Status.DaemonSetHash == "" {
		return "", fmt.Errorf("the status has not seen generation %d yet", ds.Generation)
	}
	var revs appsv1.ControllerRevisionList
	if err := env.Client.List(ctx, &revs, client.InNamespace(ns), client.MatchingLabels{appsv1.ControllerRevisionHashLabelKey: ds.Status.DaemonSetHash}); err != nil {
		return "", err
	}
	for _, r := range revs.Items {
		if ref := metav1.GetControllerOf(&r); ref != nil && ref.UID == ds.UID {
			return r.Name, nil
		}
	}
	return "", fmt.Errorf("no revision of hash %s", ds.Status.DaemonSetHash)
}

// dsPreDownload is the pre-download of DaemonSet name in ns to imageV2; old is the revision it
// moves from, which stands for the current revision a DaemonSet does not record.
func dsPreDownload(ns, name, old string) harness.PreDownload {
	return harness.PreDownload{Client: env.Client, Kind: "DaemonSet", Namespace: ns, Name: name, Image: imageV2, Timeout: framework.Medium,
		Revisions: func(ctx context.Context, name string) (harness.Revisions, error) {
			ds := &appsv1alpha1.DaemonSet{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ds); err != nil {
				return harness.Revisions{}, err
			}
			update, err := statusRevision(ctx, ns, name)
			if err != nil {
				return harness.Revisions{}, err
			}
			return harness.Revisions{UID: ds.UID, Generation: ds.Generation, ObservedGeneration: ds.Status.ObservedGeneration,
				Update: update, Current: old}, nil
		}}
}

package cloneset

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// TestPreDownloadImageForInPlaceUpdate: an in-place image change of a CloneSet with more than
// three pods, updated in batches, creates one ImagePullJob for the new image, owned by the
// CloneSet and aimed at the nodes of its pods not yet on the new revision, and labels the
// revision; once every pod is updated the job is deleted.
func TestPreDownloadImageForInPlaceUpdate(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(5).Image(imageV1).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).
		Partition(intstr.FromInt32(4)).MaxUnavailable(intstr.FromInt32(1)).Obj())
	waitSettled(t, ns, "web", 5, settle)

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	pre := preDownload(t, ns, "web")
	_, update := pre.Job(t)
	var rev appsv1.ControllerRevision
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: update}, &rev); err != nil {
		t.Fatal(err)
	}
	if rev.Labels[appsv1alpha1.ImagePreDownloadCreatedKey] != "true" {
		t.Errorf("revision labels %v lack %s", rev.Labels, appsv1alpha1.ImagePreDownloadCreatedKey)
	}

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = nil })
	waitSettledAt(t, ns, "web", 5, imageV2, settle)
	pre.WaitJobsDeleted(t)
}

// TestNoPreDownloadForSmallOrRecreatingCloneSets: three pods, or a recreate update, get no job;
// the revision says it was ignored.
func TestNoPreDownloadForSmallOrRecreatingCloneSets(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("small", ns).Replicas(3).Image(imageV1).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).MaxUnavailable(intstr.FromInt32(1)).Obj())
	create(t, kinds.CloneSet("recreate", ns).Replicas(5).Image(imageV1).
		UpdateType(appsv1alpha1.RecreateCloneSetUpdateStrategyType).MaxUnavailable(intstr.FromInt32(1)).Obj())
	waitSettled(t, ns, "small", 3, settle)
	waitSettled(t, ns, "recreate", 5, settle)
	for _, name := range []string{"small", "recreate"} {
		change(t, ns, name, func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	}
	for _, name := range []string{"small", "recreate"} {
		preDownload(t, ns, name).WaitIgnored(t, name)
	}
	var jobs appsv1alpha1.ImagePullJobList
	if err := env.Client.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("%d pre-download jobs, want none", len(jobs.Items))
	}
}

// preDownload is the pre-download of CloneSet name in ns, to imageV2.
func preDownload(t *testing.T, ns, name string) harness.PreDownload {
	return harness.PreDownload{Client: env.Client, Kind: "CloneSet", Namespace: ns, Name: name, Image: imageV2, Timeout: settle,
		Revisions: func(ctx context.Context, name string) (harness.Revisions, error) {
			cs := getCloneSet(t, ns, name)
			return harness.Revisions{UID: cs.UID, Generation: cs.Generation, ObservedGeneration: cs.Status.ObservedGeneration,
				Update: cs.Status.UpdateRevision, Current: cs.Status.CurrentRevision}, nil
		}}
}

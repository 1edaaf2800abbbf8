package cloneset

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
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
	var job appsv1alpha1.ImagePullJob
	framework.Eventually(t, settle, "the pre-download job of the new revision exists", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		if cs.Status.UpdateRevision == "" || cs.Status.UpdateRevision == cs.Status.CurrentRevision {
			return fmt.Errorf("no new update revision yet")
		}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cs.Status.UpdateRevision + "-main"}, &job)
	})
	cs := getCloneSet(t, ns, "web")
	if job.Spec.Image != imageV2 {
		t.Errorf("job image %q, want %q", job.Spec.Image, imageV2)
	}
	if ref := metav1.GetControllerOf(&job); ref == nil || ref.UID != cs.UID {
		t.Errorf("job controller %v, want the CloneSet", ref)
	}
	if job.Spec.PodSelector == nil {
		t.Fatal("job has no podSelector")
	}
	sel, err := metav1.LabelSelectorAsSelector(&job.Spec.PodSelector.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	// The selector picks the pods still to update and never the updated one.
	old, updated := 0, 0
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		onNew := p.Labels[appsv1.ControllerRevisionHashLabelKey] == cs.Status.UpdateRevision
		if sel.Matches(labels.Set(p.Labels)) {
			if onNew {
				t.Errorf("the job selects %s, which runs the new revision", p.Name)
			}
			old++
		} else if onNew {
			updated++
		}
	}
	if old == 0 {
		t.Error("the job selects none of the pods still to update")
	}
	var rev appsv1.ControllerRevision
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: cs.Status.UpdateRevision}, &rev); err != nil {
		t.Fatal(err)
	}
	if rev.Labels[appsv1alpha1.ImagePreDownloadCreatedKey] != "true" {
		t.Errorf("revision labels %v lack %s", rev.Labels, appsv1alpha1.ImagePreDownloadCreatedKey)
	}

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = nil })
	waitSettledAt(t, ns, "web", 5, imageV2, settle)
	framework.Eventually(t, settle, "the CloneSet's pre-download jobs are deleted once every pod is updated", func(ctx context.Context) error {
		var jobs appsv1alpha1.ImagePullJobList
		if err := env.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(jobs.Items) > 0 {
			return fmt.Errorf("%d jobs remain, e.g. %s", len(jobs.Items), jobs.Items[0].Name)
		}
		return nil
	})
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
		framework.Eventually(t, settle, name+"'s update revision is labelled ignored", func(ctx context.Context) error {
			// The update revision the status reports once it has seen the image change.
			cs := getCloneSet(t, ns, name)
			if cs.Status.ObservedGeneration < cs.Generation || cs.Status.UpdateRevision == "" {
				return fmt.Errorf("the status has not seen generation %d yet", cs.Generation)
			}
			var rev appsv1.ControllerRevision
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cs.Status.UpdateRevision}, &rev); err != nil {
				return err
			}
			if rev.Labels[appsv1alpha1.ImagePreDownloadIgnoredKey] != "true" {
				return fmt.Errorf("revision labels %v", rev.Labels)
			}
			return nil
		})
	}
	var jobs appsv1alpha1.ImagePullJobList
	if err := env.Client.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("%d pre-download jobs, want none", len(jobs.Items))
	}
}

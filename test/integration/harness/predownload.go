package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// PreDownload is a workload whose in-place image change pre-downloads the new image: the
// workload Name of Kind in Namespace, its pods labelled app=<Name>, moving to Image.
type PreDownload struct {
	Client          client.Client
	Kind            string
	Namespace, Name string
	Image           string
	Timeout         time.Duration
	// Revisions reads the workload name of Kind in Namespace.
	Revisions func(ctx context.Context, name string) (Revisions, error)
}

// Revisions is what PreDownload reads of a workload.
type Revisions struct {
	UID                            types.UID
	Generation, ObservedGeneration int64
	Update, Current                string
}

// Job waits until the workload's new update revision has its pre-download ImagePullJob (for
// container main) and checks it: the new image, the workload as its controller, and a pod
// selector that picks some of the pods still to update and none on the new revision. It
// returns the job and the update revision.
func (p PreDownload) Job(t *testing.T) (*appsv1alpha1.ImagePullJob, string) {
	t.Helper()
	job := &appsv1alpha1.ImagePullJob{}
	var r Revisions
	framework.Eventually(t, p.Timeout, "the pre-download job of the new revision exists", func(ctx context.Context) error {
		var err error
		if r, err = p.Revisions(ctx, p.Name); err != nil {
			return err
		}
		if r.Update == "" || r.Update == r.Current {
			return fmt.Errorf("no new update revision yet")
		}
		return p.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: r.Update + "-main"}, job)
	})
	if job.Spec.Image != p.Image {
		t.Errorf("job image %q, want %q", job.Spec.Image, p.Image)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != r.UID {
		t.Errorf("job controller %v, want the %s", ref, p.Kind)
	}
	if job.Spec.PodSelector == nil {
		t.Fatal("job has no podSelector")
	}
	sel, err := metav1.LabelSelectorAsSelector(&job.Spec.PodSelector.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	// The selector picks the pods still to update and never an updated one.
	selected := 0
	for _, pod := range framework.MustLivePods(t, p.Client, p.Namespace, p.Name) {
		if !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if pod.Labels[appsv1.ControllerRevisionHashLabelKey] == r.Update {
			t.Errorf("the job selects %s, which runs the new revision", pod.Name)
		}
		selected++
	}
	if selected == 0 {
		t.Error("the job selects none of the pods still to update")
	}
	return job, r.Update
}

// WaitJobsDeleted waits until the namespace holds no ImagePullJob, as once every pod is updated.
func (p PreDownload) WaitJobsDeleted(t *testing.T) {
	t.Helper()
	framework.Eventually(t, p.Timeout, fmt.Sprintf("the %s's pre-download jobs are deleted once every pod is updated", p.Kind), func(ctx context.Context) error {
		var jobs appsv1alpha1.ImagePullJobList
		if err := p.Client.List(ctx, &jobs, client.InNamespace(p.Namespace)); err != nil {
			return err
		}
		if len(jobs.Items) > 0 {
			return fmt.Errorf("%d jobs remain, e.g. %s", len(jobs.Items), jobs.Items[0].Name)
		}
		return nil
	})
}

// WaitIgnored waits until the status of workload name has seen its latest generation and its
// update revision is labelled as one that pre-downloads nothing.
func (p PreDownload) WaitIgnored(t *testing.T, name string) {
	t.Helper()
	framework.Eventually(t, p.Timeout, name+"'s update revision is labelled ignored", func(ctx context.Context) error {
		r, err := p.Revisions(ctx, name)
		if err != nil {
			return err
		}
		if r.ObservedGeneration < r.Generation || r.Update == "" {
			return fmt.Errorf("the status has not seen generation %d yet", r.Generation)
		}
		var rev appsv1.ControllerRevision
		if err := p.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: r.Update}, &rev); err != nil {
			return err
		}
		if rev.Labels[appsv1alpha1.ImagePreDownloadIgnoredKey] != "true" {
			return fmt.Errorf("revision labels %v", rev.Labels)
		}
		return nil
	})
}

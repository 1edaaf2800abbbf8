package imagepull

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestImageListPullJobRunsOneJobPerImage checks an ImageListPullJob makes one ImagePullJob per
// image with its template, and aggregates their results once the daemon reports them.
func TestImageListPullJobRunsOneJobPerImage(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	images := []string{"registry.example.com/list-a:v1", "registry.example.com/list-b:v1"}
	list := &appsv1alpha1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "list"},
		Spec: appsv1alpha1.ImageListPullJobSpec{Images: images}}
	list.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: []string{"node-3", "node-4"}}
	list.Spec.Parallelism = ptr.To(intstr.FromInt32(2))
	list.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	framework.CreateForTest(t, env.Client, list)

	children := map[string]*appsv1alpha1.ImagePullJob{}
	framework.Eventually(t, framework.Medium, "one ImagePullJob per image, owned by the list", func(ctx context.Context) error {
		jobs := &appsv1alpha1.ImagePullJobList{}
		if err := env.Client.List(ctx, jobs, client.InNamespace(ns)); err != nil {
			return err
		}
		clear(children)
		var got []string
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if ref := metav1.GetControllerOf(j); ref != nil && ref.UID == list.UID && ref.Kind == "ImageListPullJob" {
				children[j.Spec.Image] = j
				got = append(got, j.Spec.Image)
			}
		}
		sort.Strings(got)
		diff := cmp.Diff(images, got)
		return framework.Want(diff == "", diff)
	})
	for image, c := range children {
		if diff := cmp.Diff(list.Spec.ImagePullJobTemplate, c.Spec.ImagePullJobTemplate); diff != "" {
			t.Errorf("child for %s: template (-want +got)\n%s", image, diff)
		}
	}

	// Daemon: list-a succeeds everywhere; list-b fails on node-4.
	results := map[string]map[string]appsv1alpha1.ImagePullPhase{
		images[0]: {"node-3": appsv1alpha1.ImagePhaseSucceeded, "node-4": appsv1alpha1.ImagePhaseSucceeded},
		images[1]: {"node-3": appsv1alpha1.ImagePhaseSucceeded, "node-4": appsv1alpha1.ImagePhaseFailed},
	}
	for _, image := range images {
		uid := children[image].UID
		framework.Eventually(t, framework.Medium, "tags of "+image+" on both nodes", func(ctx context.Context) error {
			states, err := tagStates(ctx, uid, image)
			if err != nil {
				return err
			}
			diff := cmp.Diff([]string{"node-3", "node-4"}, writtenNodes(states))
			return framework.Want(diff == "", diff)
		})
		for node, phase := range results[image] {
			report(t, node, image, phase, "")
		}
	}

	failedChild := children[images[1]].Name
	framework.Eventually(t, framework.Medium, "list completed with one succeeded and one failed image", func(ctx context.Context) error {
		got := &appsv1alpha1.ImageListPullJob{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: list.Name}, got); err != nil {
			return err
		}
		want := appsv1alpha1.ImageListPullJobStatus{Desired: 2, Completed: 2, Succeeded: 1,
			FailedImageStatuses: []*appsv1alpha1.FailedImageStatus{{ImagePullJob: failedChild, Name: images[1],
				Message: fmt.Sprintf("Please check for details which nodes failed by 'kubectl get ImagePullJob %s'.", failedChild)}}}
		diff := cmp.Diff(want, got.Status, ignoreTimes)
		return framework.Want(diff == "" && got.Status.CompletionTime != nil && got.Status.StartTime != nil, diff)
	})
}

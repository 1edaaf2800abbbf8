package broadcastjob

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestAdvancedCronJobRunsBroadcastJobs: an AdvancedCronJob with a broadcastJobTemplate creates
// a BroadcastJob on its schedule, the BroadcastJob runs its pods to completion, and the
// successful history is kept to successfulJobsHistoryLimit.
func TestAdvancedCronJobRunsBroadcastJobs(t *testing.T) {
	ns := newNamespace(t)
	tmpl := kinds.BroadcastJob("unused", ns).PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj()
	acj := kinds.AdvancedCronJob("nightly", ns).Schedule("@every 2s").SuccessfulJobsHistoryLimit(1).
		BroadcastJobTemplate(map[string]string{"run": "nightly"}, tmpl.Spec).Obj()
	createCronJob(t, acj)

	framework.Eventually(t, framework.Medium, "a BroadcastJob of the AdvancedCronJob completes", func(ctx context.Context) error {
		var list appsv1alpha1.BroadcastJobList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"run": "nightly"}); err != nil {
			return err
		}
		for _, j := range list.Items {
			if ref := metav1.GetControllerOf(&j); ref == nil || ref.Kind != "AdvancedCronJob" || ref.Name != "nightly" {
				return fmt.Errorf("BroadcastJob %s is not controlled by the AdvancedCronJob: %+v", j.Name, j.OwnerReferences)
			}
			if trueCondition(&j) == appsv1alpha1.JobComplete && j.Status.Succeeded == plainNodes {
				return nil
			}
		}
		return fmt.Errorf("%d BroadcastJobs, none complete", len(list.Items))
	})
	seen := map[string]bool{}
	framework.Eventually(t, framework.Medium, "after three runs the AdvancedCronJob keeps one complete BroadcastJob", func(ctx context.Context) error {
		got := &appsv1alpha1.AdvancedCronJob{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(acj), got); err != nil {
			return err
		}
		var list appsv1alpha1.BroadcastJobList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"run": "nightly"}); err != nil {
			return err
		}
		complete := 0
		for _, j := range list.Items {
			seen[j.Name] = true
			if trueCondition(&j) == appsv1alpha1.JobComplete {
				complete++
			}
		}
		return framework.Want(got.Status.Type == appsv1alpha1.BroadcastJobTemplate && got.Status.LastScheduleTime != nil && len(seen) >= 3 && complete == 1,
			fmt.Sprintf("type %q, last run %v, %d runs seen, %d BroadcastJobs now of which %d complete (history limit 1)", got.Status.Type, got.Status.LastScheduleTime, len(seen), len(list.Items), complete))
	})
}

// TestAdvancedCronJobForbidKeepsOneBroadcastJob: with concurrencyPolicy Forbid, a BroadcastJob
// whose pods keep running holds off every later run.
func TestAdvancedCronJobForbidKeepsOneBroadcastJob(t *testing.T) {
	ns := newNamespace(t)
	tmpl := kinds.BroadcastJob("unused", ns).Obj()
	acj := kinds.AdvancedCronJob("serial", ns).Schedule("@every 1s").BroadcastJobTemplate(map[string]string{"run": "serial"}, tmpl.Spec).Obj()
	acj.Spec.ConcurrencyPolicy = appsv1alpha1.ForbidConcurrent
	createCronJob(t, acj)
	list := func(ctx context.Context) ([]appsv1alpha1.BroadcastJob, error) {
		var l appsv1alpha1.BroadcastJobList
		err := env.Client.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{"run": "serial"})
		return l.Items, err
	}
	framework.Eventually(t, framework.Medium, "the first run's BroadcastJob runs its pods", func(ctx context.Context) error {
		jobs, err := list(ctx)
		if err != nil {
			return err
		}
		return framework.Want(len(jobs) == 1 && jobs[0].Status.Active == plainNodes, fmt.Sprintf("%d BroadcastJobs", len(jobs)))
	})
	framework.Consistently(t, hold, "later runs are skipped while it runs", func(ctx context.Context) error {
		jobs, err := list(ctx)
		if err != nil {
			return err
		}
		return framework.Want(len(jobs) == 1, fmt.Sprintf("%d BroadcastJobs", len(jobs)))
	})
}

// createCronJob creates acj and deletes it, its BroadcastJobs and their pods when the test ends.
func createCronJob(t *testing.T, acj *appsv1alpha1.AdvancedCronJob) {
	t.Helper()
	// Cleanups run last first: the AdvancedCronJob goes before what it made.
	t.Cleanup(func() {
		for _, list := range []client.Object{&appsv1alpha1.BroadcastJob{}, &corev1.Pod{}} {
			_ = env.Client.DeleteAllOf(context.Background(), list, client.InNamespace(acj.Namespace))
		}
	})
	framework.CreateForTest(t, env.Client, acj)
}

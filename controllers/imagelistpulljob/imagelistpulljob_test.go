package imagelistpulljob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func listJob(images ...string) *appsv1alpha1.ImageListPullJob {
	j := &appsv1alpha1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "list", UID: "list-uid"},
		Spec: appsv1alpha1.ImageListPullJobSpec{Images: images}}
	j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	return j
}

func child(name, image string, tmpl appsv1alpha1.ImagePullJobTemplate, st appsv1alpha1.ImagePullJobStatus) *appsv1alpha1.ImagePullJob {
	return &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: appsv1alpha1.ImagePullJobSpec{Image: image, ImagePullJobTemplate: tmpl}, Status: st}
}

func TestPlanChildren(t *testing.T) {
	job := listJob("a:1", "b:1", "c:1", "a:1")
	changed := job.Spec.ImagePullJobTemplate
	changed.Parallelism = ptr.To(intstr.FromInt32(5))
	type tcase struct {
		children map[string]*appsv1alpha1.ImagePullJob
		want     plan
	}
	cases := map[string]tcase{
		"every listed image gets one child, duplicates once": {
			want: plan{create: []string{"a:1", "b:1", "c:1"}},
		},
		"an image already served is left alone, an unlisted one's child removed": {
			children: map[string]*appsv1alpha1.ImagePullJob{
				"a:1": child("list-a", "a:1", job.Spec.ImagePullJobTemplate, appsv1alpha1.ImagePullJobStatus{}),
				"z:1": child("list-z", "z:1", job.Spec.ImagePullJobTemplate, appsv1alpha1.ImagePullJobStatus{}),
			},
			want: plan{create: []string{"b:1", "c:1"}, remove: []string{"list-z"}},
		},
		"a child with an outdated template is replaced": {
			children: map[string]*appsv1alpha1.ImagePullJob{
				"a:1": child("list-a", "a:1", changed, appsv1alpha1.ImagePullJobStatus{}),
				"b:1": child("list-b", "b:1", job.Spec.ImagePullJobTemplate, appsv1alpha1.ImagePullJobStatus{}),
				"c:1": child("list-c", "c:1", job.Spec.ImagePullJobTemplate, appsv1alpha1.ImagePullJobStatus{}),
			},
			want: plan{create: []string{"a:1"}, remove: []string{"list-a"}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := planChildren(job, tc.children)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(plan{})); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

func TestComputeStatus(t *testing.T) {
	start := metav1.NewTime(t0.Add(-time.Minute))
	now := metav1.NewTime(t0)
	tmpl := appsv1alpha1.ImagePullJobTemplate{}
	running := appsv1alpha1.ImagePullJobStatus{StartTime: &start, Desired: 3, Active: 1, Succeeded: 1}
	done := appsv1alpha1.ImagePullJobStatus{StartTime: &start, Desired: 3, Succeeded: 3}
	partly := appsv1alpha1.ImagePullJobStatus{StartTime: &start, Desired: 3, Succeeded: 2, Failed: 1}
	type tcase struct {
		job      *appsv1alpha1.ImageListPullJob
		children map[string]*appsv1alpha1.ImagePullJob
		want     appsv1alpha1.ImageListPullJobStatus
	}
	cases := map[string]tcase{
		"children not started yet count for nothing": {
			job:      listJob("a:1", "b:1"),
			children: map[string]*appsv1alpha1.ImagePullJob{"a:1": child("list-a", "a:1", tmpl, appsv1alpha1.ImagePullJobStatus{})},
			want:     appsv1alpha1.ImageListPullJobStatus{StartTime: &now, Desired: 2},
		},
		"active, completed, succeeded and failed images are counted per child": {
			job: listJob("a:1", "b:1", "c:1"),
			children: map[string]*appsv1alpha1.ImagePullJob{
				"a:1": child("list-a", "a:1", tmpl, running),
				"b:1": child("list-b", "b:1", tmpl, done),
				"c:1": child("list-c", "c:1", tmpl, partly),
			},
			want: appsv1alpha1.ImageListPullJobStatus{StartTime: &now, Desired: 3, Active: 1, Completed: 2, Succeeded: 1,
				FailedImageStatuses: []*appsv1alpha1.FailedImageStatus{{ImagePullJob: "list-c", Name: "c:1", Message: failedMessage("list-c")}}},
		},
		"an Always job completes when every image's child completed": {
			job: listJob("b:1", "c:1"),
			children: map[string]*appsv1alpha1.ImagePullJob{
				"b:1": child("list-b", "b:1", tmpl, done),
				"c:1": child("list-c", "c:1", tmpl, partly),
			},
			want: appsv1alpha1.ImageListPullJobStatus{StartTime: &now, CompletionTime: &now, Desired: 2, Completed: 2, Succeeded: 1,
				FailedImageStatuses: []*appsv1alpha1.FailedImageStatus{{ImagePullJob: "list-c", Name: "c:1", Message: failedMessage("list-c")}}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := computeStatus(tc.job, tc.children, t0)
		testkit.Diff(t, "computeStatus", tc.want, got)
	})
}

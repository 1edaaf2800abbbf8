package advancedcronjob

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestBuildChild(t *testing.T) {
	run := at(10, 4)
	meta := metav1.ObjectMeta{Labels: map[string]string{"team": "web"}, Annotations: map[string]string{"note": "n"}}
	wantMeta := metav1.ObjectMeta{
		Name: "warm-1772359440", Namespace: "ns",
		Labels:      map[string]string{"team": "web"},
		Annotations: map[string]string{"note": "n", ScheduledAtAnnotation: "2026-03-01T10:04:00Z"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps.kruise.io/v1alpha1", Kind: "AdvancedCronJob", Name: "warm", UID: "acj-uid",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
	type tcase struct {
		tmpl appsv1alpha1.CronJobTemplate
		want any
	}
	tests := map[string]tcase{
		"a jobTemplate makes a batch/v1 Job named after the run": {
			tmpl: appsv1alpha1.CronJobTemplate{JobTemplate: &batchv1.JobTemplateSpec{ObjectMeta: meta, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2)}}},
			want: &batchv1.Job{ObjectMeta: wantMeta, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2)}},
		},
		"a broadcastJobTemplate makes a BroadcastJob": {
			tmpl: appsv1alpha1.CronJobTemplate{BroadcastJobTemplate: &appsv1alpha1.BroadcastJobTemplateSpec{ObjectMeta: meta, Spec: appsv1alpha1.BroadcastJobSpec{Paused: true}}},
			want: &appsv1alpha1.BroadcastJob{ObjectMeta: wantMeta, Spec: appsv1alpha1.BroadcastJobSpec{Paused: true}},
		},
		"an imageListPullJobTemplate makes an ImageListPullJob": {
			tmpl: appsv1alpha1.CronJobTemplate{ImageListPullJobTemplate: &appsv1alpha1.ImageListPullJobTemplateSpec{ObjectMeta: meta, Spec: appsv1alpha1.ImageListPullJobSpec{Images: []string{"registry.example.com/a:1"}}}},
			want: &appsv1alpha1.ImageListPullJob{ObjectMeta: wantMeta, Spec: appsv1alpha1.ImageListPullJobSpec{Images: []string{"registry.example.com/a:1"}}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		a := acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Template = tt.tmpl })
		got, err := buildChild(a, run, apis.NewScheme())
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "child", tt.want, any(got))
	})
}

func TestChildState(t *testing.T) {
	now := metav1.NewTime(at(10, 0))
	tests := []struct {
		name string
		got  childState
		want childState
	}{
		{"a Job with Complete True succeeded", jobState(&batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}}}), childSucceeded},
		{"a Job with Failed True failed", jobState(&batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: "True"}}}}), childFailed},
		{"a Job without a final condition is active", jobState(&batchv1.Job{}), childActive},
		{"a BroadcastJob with Complete True succeeded", broadcastJobState(&appsv1alpha1.BroadcastJob{Status: appsv1alpha1.BroadcastJobStatus{Conditions: []appsv1alpha1.JobCondition{{Type: appsv1alpha1.JobComplete, Status: "True"}}}}), childSucceeded},
		{"an ImageListPullJob without completionTime is active", imageListPullJobState(&appsv1alpha1.ImageListPullJob{}), childActive},
		{"a completed ImageListPullJob with every image pulled succeeded", imageListPullJobState(&appsv1alpha1.ImageListPullJob{Status: appsv1alpha1.ImageListPullJobStatus{CompletionTime: &now, Desired: 2, Succeeded: 2}}), childSucceeded},
		{"a completed ImageListPullJob missing an image failed", imageListPullJobState(&appsv1alpha1.ImageListPullJob{Status: appsv1alpha1.ImageListPullJobStatus{CompletionTime: &now, Desired: 2, Succeeded: 1}}), childFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Diff(t, "state", tt.want, tt.got)
		})
	}
}

package imagepulljob

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func job(mut ...func(*appsv1alpha1.ImagePullJob)) *appsv1alpha1.ImagePullJob {
	j := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"},
		Spec: appsv1alpha1.ImagePullJobSpec{Image: "registry.example.com/app:v1"}}
	j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	for _, m := range mut {
		m(j)
	}
	return j
}

func TestValidateImagePullJob(t *testing.T) {
	cases := map[string]struct {
		job  *appsv1alpha1.ImagePullJob
		want []string
	}{
		"a plain job is valid": {job: job()},
		"an empty image is required": {job: job(func(j *appsv1alpha1.ImagePullJob) { j.Spec.Image = "" }),
			want: []string{"FieldValueRequired spec.image"}},
		"an image that does not parse is invalid": {job: job(func(j *appsv1alpha1.ImagePullJob) { j.Spec.Image = "Registry.example.com/UPPER::v1" }),
			want: []string{"FieldValueInvalid spec.image"}},
		"names and labels together are invalid": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: []string{"a"}, LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"k": "v"}}}
		}), want: []string{"FieldValueInvalid spec.selector"}},
		"a duplicated node name is refused": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: []string{"a", "b", "a"}}
		}), want: []string{"FieldValueDuplicate spec.selector.names[2]"}},
		"a label selector that does not parse is invalid": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}}
		}), want: []string{"FieldValueInvalid spec.selector"}},
		"selector and podSelector together are invalid": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: []string{"a"}}
			j.Spec.PodSelector = &appsv1alpha1.ImagePullJobPodSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
		}), want: []string{"FieldValueInvalid spec.podSelector"}},
		"parallelism zero is invalid": {job: job(func(j *appsv1alpha1.ImagePullJob) { j.Spec.Parallelism = ptr.To(intstr.FromInt32(0)) }),
			want: []string{"FieldValueInvalid spec.parallelism"}},
		"parallelism as a percentage is valid": {job: job(func(j *appsv1alpha1.ImagePullJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("30%")) })},
		"a deadline below the default pull timeout is invalid": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](300)
		}), want: []string{"FieldValueInvalid spec.completionPolicy.activeDeadlineSeconds"}},
		"a deadline at least the pull timeout is valid": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.PullPolicy = &appsv1alpha1.PullPolicy{TimeoutSeconds: ptr.To[int32](30)}
			j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](30)
		})},
		"deadline and TTL are forbidden with Never": {job: job(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Never, ActiveDeadlineSeconds: ptr.To[int64](900), TTLSecondsAfterFinished: ptr.To[int32](10)}
		}), want: []string{"FieldValueForbidden spec.completionPolicy.activeDeadlineSeconds", "FieldValueForbidden spec.completionPolicy.ttlSecondsAfterFinished"}},
		"an unknown completion policy is not supported": {job: job(func(j *appsv1alpha1.ImagePullJob) { j.Spec.CompletionPolicy.Type = "Sometimes" }),
			want: []string{"FieldValueNotSupported spec.completionPolicy.type"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, webhooktest.TypedFields(validateImagePullJob(tc.job))); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestValidateImageListPullJob(t *testing.T) {
	list := func(images ...string) *appsv1alpha1.ImageListPullJob {
		j := &appsv1alpha1.ImageListPullJob{Spec: appsv1alpha1.ImageListPullJobSpec{Images: images}}
		j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
		return j
	}
	many := make([]string, maxImages+1)
	for i := range many {
		many[i] = "registry.example.com/app:" + string(rune('a'+i%26)) + fmt.Sprint(i)
	}
	cases := map[string]struct {
		job  *appsv1alpha1.ImageListPullJob
		want []string
	}{
		"a list of distinct images is valid": {job: list("registry.example.com/a:v1", "registry.example.com/b:v1")},
		"an empty list is required":          {job: list(), want: []string{"FieldValueRequired spec.images"}},
		"a duplicated image is refused": {job: list("registry.example.com/a:v1", "registry.example.com/a:v1"),
			want: []string{"FieldValueDuplicate spec.images[1]"}},
		"a bad image is named by index": {job: list("registry.example.com/a:v1", "bad image"),
			want: []string{"FieldValueInvalid spec.images[1]"}},
		"more than 255 images are too many": {job: list(many...), want: []string{"FieldValueTooMany spec.images"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, webhooktest.TypedFields(validateImageListPullJob(tc.job))); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

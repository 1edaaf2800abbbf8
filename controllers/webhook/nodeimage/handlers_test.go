package nodeimage

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func tag(name string) appsv1alpha1.ImageTagSpec {
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return appsv1alpha1.ImageTagSpec{Tag: name, CreatedAt: &created,
		PullPolicy: &appsv1alpha1.ImageTagPullPolicy{TTLSecondsAfterFinished: ptr.To[int32](60)}}
}

func withTags(tags ...appsv1alpha1.ImageTagSpec) *appsv1alpha1.NodeImage {
	return &appsv1alpha1.NodeImage{Spec: appsv1alpha1.NodeImageSpec{Images: map[string]appsv1alpha1.ImageSpec{
		"registry.example.com/app": {Tags: tags}}}}
}

func TestValidate(t *testing.T) {
	tooMany := &appsv1alpha1.NodeImage{Spec: appsv1alpha1.NodeImageSpec{Images: map[string]appsv1alpha1.ImageSpec{}}}
	for i := 0; i <= maxImages; i++ {
		tooMany.Spec.Images[fmt.Sprintf("registry.example.com/app-%d", i)] = appsv1alpha1.ImageSpec{}
	}
	edit := func(f func(*appsv1alpha1.ImageTagSpec)) *appsv1alpha1.NodeImage {
		t := tag("v1")
		f(&t)
		return withTags(t)
	}
	cases := map[string]struct {
		ni   *appsv1alpha1.NodeImage
		want []string // the errors, in order
	}{
		"tags with createdAt and a ttl pass": {ni: withTags(tag("v1"), tag("v2"))},
		"more than 256 images are refused":   {ni: tooMany, want: []string{"spec.images: Too many: 257: must have at most 256 items"}},
		"an empty image name is refused": {
			ni:   &appsv1alpha1.NodeImage{Spec: appsv1alpha1.NodeImageSpec{Images: map[string]appsv1alpha1.ImageSpec{"": {}}}},
			want: []string{"spec.images[]: Required value: an image name such as registry.example.com/app"},
		},
		"an empty tag is refused": {ni: withTags(tag("")), want: []string{"spec.images[registry.example.com/app].tags[0].tag: Required value: a tag such as v1"}},
		"a tag named twice is refused": {
			ni:   withTags(tag("v1"), tag("v1")),
			want: []string{`spec.images[registry.example.com/app].tags[1].tag: Duplicate value: "v1"`},
		},
		"a tag without createdAt is refused": {
			ni:   edit(func(t *appsv1alpha1.ImageTagSpec) { t.CreatedAt = nil }),
			want: []string{"spec.images[registry.example.com/app].tags[0].createdAt: Required value: the time the tag was asked for"},
		},
		"a negative version is refused": {
			ni:   edit(func(t *appsv1alpha1.ImageTagSpec) { t.Version = -1 }),
			want: []string{"spec.images[registry.example.com/app].tags[0].version: Invalid value: -1: must not be less than 0"},
		},
		"a tag without a pull policy is refused": {
			ni:   edit(func(t *appsv1alpha1.ImageTagSpec) { t.PullPolicy = nil }),
			want: []string{"spec.images[registry.example.com/app].tags[0].pullPolicy: Required value: a pull policy with ttlSecondsAfterFinished"},
		},
		"a pull policy without a ttl is refused": {
			ni:   edit(func(t *appsv1alpha1.ImageTagSpec) { t.PullPolicy.TTLSecondsAfterFinished = nil }),
			want: []string{"spec.images[registry.example.com/app].tags[0].pullPolicy.ttlSecondsAfterFinished: Required value: how long the tag stays after its pull finished, in seconds"},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc struct {
		ni   *appsv1alpha1.NodeImage
		want []string
	}) {
		var got []string
		for _, err := range validate(tc.ni) {
			got = append(got, err.Error())
		}
		testkit.Diff(t, "errors", tc.want, got)
	})
}

func TestSetDefaultsStampsFillsAndSorts(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ni := withTags(appsv1alpha1.ImageTagSpec{Tag: "v2"}, tag("v1"))
	ni.Status.ImageStatuses = map[string]appsv1alpha1.ImageStatus{"registry.example.com/app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v2"}, {Tag: "v1"}}}}
	setDefaults(ni, clocktesting.NewFakePassiveClock(now))

	stamped := metav1.NewTime(now)
	earlier := tag("v1")
	earlier.PullPolicy.TimeoutSeconds, earlier.PullPolicy.BackoffLimit = ptr.To[int32](600), ptr.To[int32](3)
	want := []appsv1alpha1.ImageTagSpec{earlier, {Tag: "v2", CreatedAt: &stamped,
		PullPolicy: &appsv1alpha1.ImageTagPullPolicy{TimeoutSeconds: ptr.To[int32](600), BackoffLimit: ptr.To[int32](3)}}}
	testkit.Diff(t, "spec tags", want, ni.Spec.Images["registry.example.com/app"].Tags)
	testkit.Diff(t, "status tags", []appsv1alpha1.ImageTagStatus{{Tag: "v1"}, {Tag: "v2"}}, ni.Status.ImageStatuses["registry.example.com/app"].Tags)
}

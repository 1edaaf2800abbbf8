package nodeimage

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(t0.Add(d))
	return &t
}

func jobRef(name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "ImagePullJob", Namespace: "ns", Name: name, UID: "uid-" + "name"}
}

func withImages(images map[string]appsv1alpha1.ImageSpec, statuses map[string]appsv1alpha1.ImageStatus) *appsv1alpha1.NodeImage {
	return &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "a"}},
		Spec: appsv1alpha1.NodeImageSpec{Images: images}, Status: appsv1alpha1.NodeImageStatus{ImageStatuses: statuses}}
}

func TestCleanSpec(t *testing.T) {
	alive := func(ref corev1.ObjectReference) bool { return ref.Name != "gone" }
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "a"}}}
	ttl := &appsv1alpha1.ImageTagPullPolicy{TTLSecondsAfterFinished: ptr.To[int32](60)}
	type tcase struct {
		ni         *appsv1alpha1.NodeImage
		node       *corev1.Node
		wantSpec   map[string]appsv1alpha1.ImageSpec
		wantLabels map[string]string
		wantMod    bool
		wantWait   time.Duration
	}
	cases := map[string]tcase{
		"node labels are copied onto the NodeImage": {
			ni:         withImages(nil, nil),
			node:       &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "b"}}},
			wantLabels: map[string]string{"pool": "b"}, wantMod: true,
		},
		"a tag whose only job is gone is dropped, and the image with it": {
			ni:   withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", CreatedAt: at(0), OwnerReferences: []corev1.ObjectReference{jobRef("gone")}}}}}, nil),
			node: node, wantLabels: map[string]string{"pool": "a"}, wantMod: true,
		},
		"a tag keeps its live owners and owners of other kinds": {
			ni: withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", CreatedAt: at(0),
				OwnerReferences: []corev1.ObjectReference{jobRef("gone"), jobRef("live"), {APIVersion: "v1", Kind: "Pod", Name: "gone"}}}}}}, nil),
			node: node, wantLabels: map[string]string{"pool": "a"}, wantMod: true,
			wantSpec: map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", CreatedAt: at(0),
				OwnerReferences: []corev1.ObjectReference{jobRef("live"), {APIVersion: "v1", Kind: "Pod", Name: "gone"}}}}}},
		},
		"a tag without createdAt is dropped": {
			ni:   withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", OwnerReferences: []corev1.ObjectReference{jobRef("live")}}}}}, nil),
			node: node, wantLabels: map[string]string{"pool": "a"}, wantMod: true,
		},
		"a finished tag past its TTL is dropped": {
			ni: withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1, CreatedAt: at(-time.Hour), PullPolicy: ttl, OwnerReferences: []corev1.ObjectReference{jobRef("live")}}}}},
				map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v1", Version: 1, Phase: appsv1alpha1.ImagePhaseSucceeded, CompletionTime: at(-time.Minute)}}}}),
			node: node, wantLabels: map[string]string{"pool": "a"}, wantMod: true,
		},
		"a finished tag within its TTL stays and the pass waits for it": {
			ni: withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1, CreatedAt: at(-time.Hour), PullPolicy: ttl, OwnerReferences: []corev1.ObjectReference{jobRef("live")}}}}},
				map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v1", Version: 1, Phase: appsv1alpha1.ImagePhaseSucceeded, CompletionTime: at(-20 * time.Second)}}}}),
			node: node, wantLabels: map[string]string{"pool": "a"}, wantWait: 40 * time.Second,
			wantSpec: map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1, CreatedAt: at(-time.Hour), PullPolicy: ttl, OwnerReferences: []corev1.ObjectReference{jobRef("live")}}}}},
		},
		"the TTL counts only from the completion of the spec's version": {
			ni: withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 2, CreatedAt: at(-time.Hour), PullPolicy: ttl, OwnerReferences: []corev1.ObjectReference{jobRef("live")}}}}},
				map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v1", Version: 1, CompletionTime: at(-time.Hour)}}}}),
			node: node, wantLabels: map[string]string{"pool": "a"},
			wantSpec: map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 2, CreatedAt: at(-time.Hour), PullPolicy: ttl, OwnerReferences: []corev1.ObjectReference{jobRef("live")}}}}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		ch := cleanSpec(tc.ni, tc.node, alive, t0)
		testkit.Diff(t, "spec", tc.wantSpec, tc.ni.Spec.Images)
		testkit.Diff(t, "labels", tc.wantLabels, tc.ni.Labels)
		testkit.Diff(t, "modified, requeueAfter", []any{tc.wantMod, tc.wantWait}, []any{ch.modified, ch.requeueAfter})
	})
}

func TestExpireStatus(t *testing.T) {
	deadline := &appsv1alpha1.ImageTagPullPolicy{ActiveDeadlineSeconds: ptr.To[int64](30)}
	type tcase struct {
		ni         *appsv1alpha1.NodeImage
		wantFailed []string
		wantStatus appsv1alpha1.NodeImageStatus
		wantWait   time.Duration
	}
	cases := map[string]tcase{
		"a tag the daemon has not answered for a minute fails and the counters are recomputed": {
			ni: withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 3, CreatedAt: at(-61 * time.Second)}, {Tag: "v2", CreatedAt: at(-time.Hour)}}}},
				map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v2", Phase: appsv1alpha1.ImagePhaseSucceeded}, {Tag: "old", Phase: appsv1alpha1.ImagePhaseSucceeded}}}}),
			wantFailed: []string{"app:v1"},
			wantStatus: appsv1alpha1.NodeImageStatus{Desired: 2, Succeeded: 1, Failed: 1, ImageStatuses: map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{
				{Tag: "v1", Version: 3, Phase: appsv1alpha1.ImagePhaseFailed, CompletionTime: at(0), Message: msgNoResponse},
				{Tag: "v2", Phase: appsv1alpha1.ImagePhaseSucceeded}}}}},
		},
		"a young unanswered tag waits for the rest of the minute": {
			ni:       withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", CreatedAt: at(-50 * time.Second)}}}}, nil),
			wantWait: 10 * time.Second,
		},
		"a tag still pulling past its deadline plus the response minute fails": {
			ni: withImages(map[string]appsv1alpha1.ImageSpec{"app": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", CreatedAt: at(-91 * time.Second), PullPolicy: deadline}}}},
				map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v1", Phase: appsv1alpha1.ImagePhasePulling, StartTime: at(-80 * time.Second)}}}}),
			wantFailed: []string{"app:v1"},
			wantStatus: appsv1alpha1.NodeImageStatus{Desired: 1, Failed: 1, ImageStatuses: map[string]appsv1alpha1.ImageStatus{"app": {Tags: []appsv1alpha1.ImageTagStatus{
				{Tag: "v1", Phase: appsv1alpha1.ImagePhaseFailed, StartTime: at(-80 * time.Second), CompletionTime: at(0), Message: msgDeadline}}}}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		st, ch := expireStatus(tc.ni, t0)
		testkit.Diff(t, "failed", tc.wantFailed, ch.failed)
		testkit.Diff(t, "requeueAfter", tc.wantWait, ch.requeueAfter)
		testkit.Diff(t, "status", tc.wantStatus, st)
	})
}

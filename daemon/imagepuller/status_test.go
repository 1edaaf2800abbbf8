package imagepuller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestBuildStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	first := &appsv1alpha1.SyncStatus{SyncAt: now, Status: appsv1alpha1.SyncStatusSucceeded}
	spec := appsv1alpha1.NodeImageSpec{Images: map[string]appsv1alpha1.ImageSpec{
		"registry.example.com/web": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1}, {Tag: "v2"}}},
	}}
	type tcase struct {
		spec   appsv1alpha1.NodeImageSpec
		states map[tagKey]appsv1alpha1.ImageTagStatus
		want   appsv1alpha1.NodeImageStatus
	}
	tests := map[string]tcase{
		"tags not taken up yet are Waiting and counted as desired": {
			spec: spec,
			want: appsv1alpha1.NodeImageStatus{Desired: 2, Waiting: 2, FirstSyncStatus: first, ImageStatuses: map[string]appsv1alpha1.ImageStatus{
				"registry.example.com/web": {Tags: []appsv1alpha1.ImageTagStatus{
					{Tag: "v1", Phase: appsv1alpha1.ImagePhaseWaiting, Version: 1},
					{Tag: "v2", Phase: appsv1alpha1.ImagePhaseWaiting},
				}},
			}},
		},
		"succeeded and failed tags are counted by phase": {
			spec: spec,
			states: map[tagKey]appsv1alpha1.ImageTagStatus{
				{"registry.example.com/web", "v1"}: {Tag: "v1", Phase: appsv1alpha1.ImagePhaseSucceeded, Progress: 100, Version: 1},
				{"registry.example.com/web", "v2"}: {Tag: "v2", Phase: appsv1alpha1.ImagePhaseFailed, Message: "not found"},
			},
			want: appsv1alpha1.NodeImageStatus{Desired: 2, Succeeded: 1, Failed: 1, FirstSyncStatus: first, ImageStatuses: map[string]appsv1alpha1.ImageStatus{
				"registry.example.com/web": {Tags: []appsv1alpha1.ImageTagStatus{
					{Tag: "v1", Phase: appsv1alpha1.ImagePhaseSucceeded, Progress: 100, Version: 1},
					{Tag: "v2", Phase: appsv1alpha1.ImagePhaseFailed, Message: "not found"},
				}},
			}},
		},
		"a state of an older version does not answer a newer spec": {
			spec: spec,
			states: map[tagKey]appsv1alpha1.ImageTagStatus{
				{"registry.example.com/web", "v1"}: {Tag: "v1", Phase: appsv1alpha1.ImagePhaseSucceeded, Version: 0},
				{"registry.example.com/web", "v2"}: {Tag: "v2", Phase: appsv1alpha1.ImagePhasePulling},
			},
			want: appsv1alpha1.NodeImageStatus{Desired: 2, Waiting: 1, Pulling: 1, FirstSyncStatus: first, ImageStatuses: map[string]appsv1alpha1.ImageStatus{
				"registry.example.com/web": {Tags: []appsv1alpha1.ImageTagStatus{
					{Tag: "v1", Phase: appsv1alpha1.ImagePhaseWaiting, Version: 1},
					{Tag: "v2", Phase: appsv1alpha1.ImagePhasePulling},
				}},
			}},
		},
		"an empty spec leaves no image statuses": {
			spec: appsv1alpha1.NodeImageSpec{},
			states: map[tagKey]appsv1alpha1.ImageTagStatus{
				{"registry.example.com/gone", "v1"}: {Tag: "v1", Phase: appsv1alpha1.ImagePhaseSucceeded},
			},
			want: appsv1alpha1.NodeImageStatus{FirstSyncStatus: first},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := buildStatus(tt.spec, tt.states, appsv1alpha1.NodeImageStatus{}, now)
		testkit.Diff(t, "buildStatus", tt.want, got)
	})
}

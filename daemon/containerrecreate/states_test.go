package containerrecreate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestCurrentStates(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	now := created.Add(time.Minute)
	crr := func(sync string, prev ...appsv1alpha1.ContainerRecreateRequestContainerRecreateState) *appsv1alpha1.ContainerRecreateRequest {
		c := &appsv1alpha1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
			Spec: appsv1alpha1.ContainerRecreateRequestSpec{Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{
				Name:          "app",
				StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://old", RestartCount: 0},
			}}},
			Status: appsv1alpha1.ContainerRecreateRequestStatus{ContainerRecreateStates: prev},
		}
		if sync != "" {
			c.Annotations = map[string]string{appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey: sync}
		}
		return c
	}
	running := func(id string, state criv1.ContainerState, restarts int32, started time.Time) map[string]*cri.Container {
		return map[string]*cri.Container{"app": {Name: "app", FullID: "containerd://" + id, State: state, RestartCount: restarts, StartedAt: started}}
	}
	forced := func(c *appsv1alpha1.ContainerRecreateRequest) *appsv1alpha1.ContainerRecreateRequest {
		c.Spec.Strategy = &appsv1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: true}
		return c
	}
	before := created.Add(-time.Hour)
	type tcase struct {
		crr     *appsv1alpha1.ContainerRecreateRequest
		running map[string]*cri.Container
		want    appsv1alpha1.ContainerRecreateRequestContainerRecreateState
	}
	tests := map[string]tcase{
		"a container not on the node is Pending with a message": {
			crr:  crr(""),
			want: appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Pending", Message: "not found container on Node"},
		},
		"the same container still running waits to be stopped": {
			crr:     crr(""),
			running: running("old", criv1.ContainerState_CONTAINER_RUNNING, 0, before),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Pending"},
		},
		"a stopped container is being recreated, and the kill is remembered": {
			crr:     crr("", appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Recreating", IsKilled: true}),
			running: running("old", criv1.ContainerState_CONTAINER_EXITED, 0, before),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Recreating", IsKilled: true},
		},
		"a new container the pod does not report ready yet is still Recreating": {
			crr:     crr(`[{"name":"app","ready":false,"restartCount":1,"containerID":"containerd://new"}]`),
			running: running("new", criv1.ContainerState_CONTAINER_RUNNING, 1, now.Add(-time.Second)),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Recreating"},
		},
		"a new container reported ready with its ID is Succeeded": {
			crr:     crr(`[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://new"}]`),
			running: running("new", criv1.ContainerState_CONTAINER_RUNNING, 1, now.Add(-time.Second)),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Succeeded"},
		},
		"under forceRecreate a container started after the CRR but not stopped by it waits to be stopped": {
			crr:     forced(crr("")),
			running: running("new", criv1.ContainerState_CONTAINER_RUNNING, 1, now.Add(-time.Second)),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Pending"},
		},
		"under forceRecreate a container the CRR stopped and the kubelet started again is recreated": {
			crr:     forced(crr(`[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://new"}]`, appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Recreating", IsKilled: true})),
			running: running("new", criv1.ContainerState_CONTAINER_RUNNING, 1, now.Add(-time.Second)),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Succeeded", IsKilled: true},
		},
		"a finished state is kept whatever the runtime shows": {
			crr:     crr("", appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Failed", Message: "kill container error"}),
			running: running("old", criv1.ContainerState_CONTAINER_RUNNING, 0, before),
			want:    appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", Phase: "Failed", Message: "kill container error"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := currentStates(tt.crr, tt.running, now)
		testkit.Diff(t, "currentStates", []appsv1alpha1.ContainerRecreateRequestContainerRecreateState{tt.want}, got)
	})
}

func TestRecheckAfter(t *testing.T) {
	type tcase struct {
		phase corev1.PodPhase
		want  time.Duration
	}
	cases := map[string]tcase{
		"a running pod's request is looked at again, for the runtime sends no events":     {phase: corev1.PodRunning, want: recheckInterval},
		"a Succeeded pod's request is not polled: its containers are never started again": {phase: corev1.PodSucceeded},
		"a Failed pod's request is not polled either":                                     {phase: corev1.PodFailed},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := recheckAfter(&corev1.Pod{Status: corev1.PodStatus{Phase: tc.phase}})
		testkit.Diff(t, "recheck after", tc.want, got)
	})
}

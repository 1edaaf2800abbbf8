package statefulset

import (
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var statusNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// statusPod is pod web-<o> at revision rev, Running, and Ready since readyFor ago when
// readyFor >= 0.
func statusPod(o int, rev string, readyFor time.Duration) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName("web", o), Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: rev}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if readyFor >= 0 {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(statusNow.Add(-readyFor))}}
	}
	return p
}

func statusScope(replicas int, minReady int32, pods ...*corev1.Pod) *scope {
	set := &appsv1beta1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 4},
		Spec: appsv1beta1.StatefulSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			UpdateStrategy: appsv1beta1.StatefulSetUpdateStrategy{RollingUpdate: &appsv1beta1.RollingUpdateStatefulSetStrategy{MinReadySeconds: ptr.To(minReady)}},
		},
		Status: appsv1beta1.StatefulSetStatus{CurrentRevision: "web-1"},
	}
	return &scope{
		set: set, pods: pods, ordinals: ords(0, replicas),
		Tracked: revision.Tracked{CollisionCount: 2, Revisions: revision.Revisions{
			Current: &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}},
			Update:  &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-2"}},
		}},
	}
}

func TestComputeStatus(t *testing.T) {
	type tcase struct {
		s       *scope
		out     outcome
		syncErr error
		want    appsv1beta1.StatefulSetStatus
		wantCnd []appsv1.StatefulSetConditionType
	}
	tests := map[string]tcase{
		"a rollout under way counts pods at each revision and keeps the current revision": {
			s: statusScope(3, 0, statusPod(0, "web-1", time.Minute), statusPod(1, "web-1", time.Minute), statusPod(2, "web-2", -1)),
			want: appsv1beta1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 1,
				CurrentRevision: "web-1", UpdateRevision: "web-2"},
		},
		"a finished rollout makes the update revision current": {
			s: statusScope(2, 0, statusPod(0, "web-2", time.Minute), statusPod(1, "web-2", time.Minute)),
			want: appsv1beta1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 2,
				UpdatedReadyReplicas: 2, UpdatedAvailableReplicas: 2, CurrentRevision: "web-2", UpdateRevision: "web-2"},
		},
		"a pod ready for less than minReadySeconds is ready but not available": {
			s: statusScope(1, 30, statusPod(0, "web-2", 10*time.Second)),
			want: appsv1beta1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, CurrentReplicas: 1, UpdatedReplicas: 1, UpdatedReadyReplicas: 1,
				CurrentRevision: "web-2", UpdateRevision: "web-2"},
		},
		"a terminating pod is not counted": {
			s: statusScope(1, 0, statusPod(0, "web-2", time.Minute), func() *corev1.Pod {
				p := statusPod(1, "web-2", time.Minute)
				p.DeletionTimestamp = &metav1.Time{Time: statusNow}
				return p
			}()),
			want: appsv1beta1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, CurrentReplicas: 1, UpdatedReplicas: 1,
				UpdatedReadyReplicas: 1, UpdatedAvailableReplicas: 1, CurrentRevision: "web-2", UpdateRevision: "web-2"},
		},
		"an InPlaceOnly refusal sets FailedUpdatePod": {
			s:       statusScope(0, 0),
			out:     outcome{Stuck: "stuck"},
			want:    appsv1beta1.StatefulSetStatus{CurrentRevision: "web-2", UpdateRevision: "web-2"},
			wantCnd: []appsv1.StatefulSetConditionType{appsv1beta1.FailedUpdatePod},
		},
		"a failed create sets FailedCreatePod": {
			s:       statusScope(0, 0),
			syncErr: createError(errors.New("quota")),
			want:    appsv1beta1.StatefulSetStatus{CurrentRevision: "web-2", UpdateRevision: "web-2"},
			wantCnd: []appsv1.StatefulSetConditionType{appsv1beta1.FailedCreatePod},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := computeStatus(tt.s, statusNow, tt.out, tt.syncErr)
		var cnd []appsv1.StatefulSetConditionType
		for _, c := range got.Conditions {
			cnd = append(cnd, c.Type)
		}
		got.Conditions = nil
		tt.want.ObservedGeneration, tt.want.CollisionCount, tt.want.LabelSelector = 4, ptr.To[int32](2), "app=web"
		testkit.Diff(t, "status", tt.want, got)
		testkit.Diff(t, "conditions", tt.wantCnd, cnd)
	})
}

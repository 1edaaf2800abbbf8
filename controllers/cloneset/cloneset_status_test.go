package cloneset

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func statusScope(replicas int32, pods ...*corev1.Pod) *scope {
	cs := kinds.CloneSet("web", "ns").Replicas(replicas).Obj()
	cs.Generation, cs.Status.CurrentRevision = 3, "web-old"
	old := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-old"}, Revision: 1}
	upd := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-new"}, Revision: 2}
	return &scope{cs: cs, pods: pods, Tracked: revision.Tracked{Revisions: revision.Revisions{History: []*appsv1.ControllerRevision{old, upd}, Current: old, Update: upd}}}
}

func statusPod(rev string, ready bool, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: rev}}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(planNow.Add(-time.Minute))}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func inPlaceUpdating(p *corev1.Pod) {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse})
}

func TestComputeStatus(t *testing.T) {
	type tcase struct {
		scope   *scope
		outcome outcome
		err     error
		want    appsv1alpha1.CloneSetStatus
	}
	tests := map[string]tcase{
		"every pod updated and ready makes the update revision current": {
			scope: statusScope(2, statusPod("web-new", true), statusPod("web-new", true)),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				UpdatedReplicas: 2, UpdatedReadyReplicas: 2, UpdatedAvailableReplicas: 2, ExpectedUpdatedReplicas: 2,
				UpdateRevision: "web-new", CurrentRevision: "web-new", LabelSelector: "app=web"},
		},
		"a rollout under way keeps the current revision": {
			scope: statusScope(2, statusPod("web-old", true), statusPod("web-new", false)),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1,
				UpdatedReplicas: 1, ExpectedUpdatedReplicas: 2,
				UpdateRevision: "web-new", CurrentRevision: "web-old", LabelSelector: "app=web"},
		},
		"a pod in an in-place update is not counted ready even before the kubelet says so": {
			scope: statusScope(1, statusPod("web-new", true, inPlaceUpdating)),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, Replicas: 1, UpdatedReplicas: 1, ExpectedUpdatedReplicas: 1,
				UpdateRevision: "web-new", CurrentRevision: "web-new", LabelSelector: "app=web"},
		},
		"a partition lowers the expected updated replicas": {
			scope: func() *scope {
				s := statusScope(4, statusPod("web-old", true))
				half := intstr.FromString("50%")
				s.cs.Spec.UpdateStrategy.Partition = &half
				return s
			}(),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ExpectedUpdatedReplicas: 2,
				UpdateRevision: "web-new", CurrentRevision: "web-old", LabelSelector: "app=web"},
		},
		"a failed scale sets FailedScale": {
			scope: statusScope(0),
			err:   scaleError(errors.New("create pod web-x: quota exceeded")),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, UpdateRevision: "web-new", CurrentRevision: "web-new", LabelSelector: "app=web",
				Conditions: []appsv1alpha1.CloneSetCondition{{Type: appsv1alpha1.CloneSetConditionFailedScale, Status: corev1.ConditionTrue,
					Reason: "FailedScale", Message: "create pod web-x: quota exceeded"}}},
		},
		"an InPlaceOnly update that cannot go in place sets FailedUpdate from the plan": {
			scope:   statusScope(1, statusPod("web-old", true)),
			outcome: planOutcome(statusScope(1), plan{stuck: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web-a"}}}}),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ExpectedUpdatedReplicas: 1,
				UpdateRevision: "web-new", CurrentRevision: "web-old", LabelSelector: "app=web",
				Conditions: []appsv1alpha1.CloneSetCondition{{Type: appsv1alpha1.CloneSetConditionFailedUpdate, Status: corev1.ConditionTrue,
					Reason: "FailedUpdate", Message: "pods web-a cannot be updated in place to revision web-new, and the update strategy is InPlaceOnly"}}},
		},
		"a successful pass drops an old FailedUpdate": {
			scope: func() *scope {
				s := statusScope(0)
				s.cs.Status.Conditions = []appsv1alpha1.CloneSetCondition{{Type: appsv1alpha1.CloneSetConditionFailedUpdate, Status: corev1.ConditionTrue}}
				return s
			}(),
			want: appsv1alpha1.CloneSetStatus{ObservedGeneration: 3, UpdateRevision: "web-new", CurrentRevision: "web-new", LabelSelector: "app=web"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		got := computeStatus(tc.scope, planNow, tc.outcome, tc.err)
		got.CollisionCount = nil
		testkit.Diff(t, "status", tc.want, got, cmpopts.IgnoreFields(appsv1alpha1.CloneSetCondition{}, "LastTransitionTime"))
	})
}

package lifecycle

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// step is one Move: to a state, with or without markNotReady.
type step struct {
	to           appspub.LifecycleStateType
	markNotReady bool
}

func TestMoveKeepsKruisePodReadyFalseOnlyWhileAHookHoldsThePod(t *testing.T) {
	const crrHold = `[{"userAgent":"ContainerRecreateRequest","key":"ns/restart"}]`
	type tcase struct {
		// message and reason are the KruisePodReady message and reason before the moves; with
		// neither, the condition is True.
		message, reason string
		moves           []step
		want            corev1.ConditionStatus
	}
	tests := map[string]tcase{
		"a hook with markPodNotReady turns the pod not ready": {
			moves: []step{{appspub.LifecycleStatePreparingDelete, true}},
			want:  corev1.ConditionFalse,
		},
		"a hook without markPodNotReady leaves the pod ready": {
			moves: []step{{appspub.LifecycleStatePreparingUpdate, false}},
			want:  corev1.ConditionTrue,
		},
		"a pod scaled back up from PreparingDelete is ready again": {
			moves: []step{{appspub.LifecycleStatePreparingDelete, true}, {appspub.LifecycleStateNormal, true}},
			want:  corev1.ConditionTrue,
		},
		"a pod back to Normal after its in-place update is ready again, though the moves after PreparingUpdate do not mark it": {
			moves: []step{
				{appspub.LifecycleStatePreparingUpdate, true},
				{appspub.LifecycleStateUpdating, false},
				{appspub.LifecycleStateUpdated, false},
				{appspub.LifecycleStateNormal, false},
			},
			want: corev1.ConditionTrue,
		},
		"a pod an earlier release held, with a Lifecycle reason and no holders, is ready again at Normal": {
			reason: "LifecyclePreparingUpdate",
			moves:  []step{{appspub.LifecycleStateNormal, false}},
			want:   corev1.ConditionTrue,
		},
		"a False condition someone else set without holders is left alone at Normal": {
			reason: "SetByHand",
			moves:  []step{{appspub.LifecycleStateNormal, true}},
			want:   corev1.ConditionFalse,
		},
		"a pod back to Normal stays not ready while a container recreation holds it": {
			message: crrHold,
			moves:   []step{{appspub.LifecycleStatePreparingDelete, true}, {appspub.LifecycleStateNormal, true}},
			want:    corev1.ConditionFalse,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		status := corev1.ConditionTrue
		if tc.message != "" || tc.reason != "" {
			status = corev1.ConditionFalse
		}
		pod := builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).Condition(appspub.KruisePodReadyConditionType, status).Obj()
		pod.Status.Conditions[0].Message, pod.Status.Conditions[0].Reason = tc.message, tc.reason
		c := testclient.New(pod)
		m := Mover{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
		cur := pod
		for _, s := range tc.moves {
			moved, err := m.Move(context.Background(), cur, s.to, s.markNotReady)
			if err != nil {
				t.Fatalf("move to %s: %v", s.to, err)
			}
			cur = moved
		}
		stored := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), stored); err != nil {
			t.Fatal(err)
		}
		var got corev1.ConditionStatus
		for _, cond := range stored.Status.Conditions {
			if cond.Type == appspub.KruisePodReadyConditionType {
				got = cond.Status
			}
		}
		testkit.Diff(t, "KruisePodReady after the moves", tc.want, got)
	})
}

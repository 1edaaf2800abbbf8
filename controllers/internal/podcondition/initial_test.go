package podcondition

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func TestInitial(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	deleting := builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).Finalizer("example.com/hold").Obj()
	deleting.DeletionTimestamp = ptr.To(now)
	kruiseReady := corev1.PodCondition{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now}
	inPlaceReady := corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue, LastTransitionTime: now}
	bothGates := func() *builder.PodBuilder {
		return builder.Pod("p", "ns").ReadinessGate(appspub.InPlaceUpdateReady).ReadinessGate(appspub.KruisePodReadyConditionType)
	}

	type tcase struct {
		pod  *corev1.Pod
		want []corev1.PodCondition
	}
	tests := map[string]tcase{
		"a gated pod without the condition gets KruisePodReady True": {
			pod:  builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).Obj(),
			want: []corev1.PodCondition{kruiseReady},
		},
		"a new workload pod gets both conditions, in the order of its gates": {
			pod:  bothGates().Obj(),
			want: []corev1.PodCondition{inPlaceReady, kruiseReady},
		},
		"a pod with only the InPlaceUpdateReady gate gets that condition": {
			pod:  builder.Pod("p", "ns").ReadinessGate(appspub.InPlaceUpdateReady).Obj(),
			want: []corev1.PodCondition{inPlaceReady},
		},
		"a pod whose in-place update started gets no InPlaceUpdateReady from here": {
			pod:  bothGates().Annotation(appspub.InPlaceUpdateStateKey, `{"revision":"r2"}`).Obj(),
			want: []corev1.PodCondition{kruiseReady},
		},
		"a pod waiting for an in-place update's grace period gets no InPlaceUpdateReady from here": {
			pod:  bothGates().Annotation(appspub.InPlaceUpdateGraceKey, `{"revision":"r2"}`).Obj(),
			want: []corev1.PodCondition{kruiseReady},
		},
		"a gated pod whose condition a workload set False is left alone": {
			pod: builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).
				Condition(appspub.KruisePodReadyConditionType, corev1.ConditionFalse).Obj(),
		},
		"a pod whose InPlaceUpdateReady a workload set False keeps it, and gets only KruisePodReady": {
			pod:  bothGates().Condition(appspub.InPlaceUpdateReady, corev1.ConditionFalse).Obj(),
			want: []corev1.PodCondition{kruiseReady},
		},
		"a gated pod that already has the condition True is left alone": {
			pod: builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).
				Condition(appspub.KruisePodReadyConditionType, corev1.ConditionTrue).Obj(),
		},
		"a pod gated on some other condition is left alone": {
			pod: builder.Pod("p", "ns").ReadinessGate("example.com/ready").Obj(),
		},
		"a pod being deleted is left alone": {
			pod: deleting,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := Initial(tt.pod, now)
		testkit.Diff(t, "conditions", tt.want, got)
	})
}

package podreadiness

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/apis"
	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

var now = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func TestReconcile(t *testing.T) {
	type tcase struct {
		pod            *corev1.Pod
		wantConditions []corev1.PodCondition
		wantWrites     int
	}
	tests := map[string]tcase{
		"the condition is added next to the kubelet's": {
			pod: builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).
				Condition(corev1.PodReady, corev1.ConditionFalse).Obj(),
			wantConditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse},
				{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now},
			},
			wantWrites: 1,
		},
		"a False condition set by a workload stays False": {
			pod: builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).
				Condition(appspub.KruisePodReadyConditionType, corev1.ConditionFalse).Obj(),
			wantConditions: []corev1.PodCondition{{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionFalse}},
		},
		"a new workload pod gets both its conditions in one write": {
			pod: builder.Pod("p", "ns").ReadinessGate(appspub.InPlaceUpdateReady).ReadinessGate(appspub.KruisePodReadyConditionType).
				Condition(corev1.PodReady, corev1.ConditionFalse).Obj(),
			wantConditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse},
				{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now},
			},
			wantWrites: 1,
		},
		"an ungated pod gets nothing": {
			pod: builder.Pod("p", "ns").Obj(),
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		base := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(tt.pod).WithStatusSubresource(&corev1.Pod{}).Build()
		writes := 0
		c := testkit.CountStatusPatches(base, &writes)
		r := NewReconciler(c, nil, clocktesting.NewFakePassiveClock(now.Time))
		key := types.NamespacedName{Namespace: "ns", Name: "p"}
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		if writes != tt.wantWrites {
			t.Errorf("%d status writes, want %d", writes, tt.wantWrites)
		}
		got := &corev1.Pod{}
		if err := c.Get(context.Background(), key, got); err != nil {
			t.Fatal(err)
		}
		// Times come back from JSON in the local zone; compare instants.
		for i := range got.Status.Conditions {
			c := &got.Status.Conditions[i]
			if !c.LastTransitionTime.IsZero() {
				c.LastTransitionTime = metav1.NewTime(c.LastTransitionTime.UTC())
			}
		}
		testkit.Diff(t, "conditions", tt.wantConditions, got.Status.Conditions)
	})
}

func TestReconcileIgnoresMissingPods(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).Build()
	r := NewReconciler(c, nil, clocktesting.NewFakePassiveClock(now.Time))
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "gone"}})
	testkit.Diff(t, "error", nil, err)
}

func TestReconcileRetriesAWriteThatRacedTheKubelet(t *testing.T) {
	pod := builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).Obj()
	base := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(pod).WithStatusSubresource(&corev1.Pod{}).Build()
	raced := false
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if !raced {
				// The kubelet reports the pod Running between our read and our write.
				raced = true
				p := &corev1.Pod{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), p); err != nil {
					return err
				}
				p.Status.Phase = corev1.PodRunning
				if err := c.Status().Update(ctx, p); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	r := NewReconciler(c, nil, clocktesting.NewFakePassiveClock(now.Time))
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	got := &corev1.Pod{}
	if err := base.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	var ready corev1.ConditionStatus
	for _, c := range got.Status.Conditions {
		if c.Type == appspub.KruisePodReadyConditionType {
			ready = c.Status
		}
	}
	testkit.Diff(t, "phase, KruisePodReady", []any{corev1.PodRunning, corev1.ConditionTrue}, []any{got.Status.Phase, ready})
}

func TestAPassOnACopyThatPredatesItsOwnWriteWritesNothing(t *testing.T) {
	stale := builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).Obj()
	base := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(stale).WithStatusSubresource(&corev1.Pod{}).Build()
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(stale), stale); err != nil {
		t.Fatal(err)
	}
	// The cache keeps handing out the pod as it was before the condition write.
	cached := false
	cache := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cached {
				stale.DeepCopyInto(obj.(*corev1.Pod))
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	writes := 0
	c := testkit.CountStatusPatches(cache.(client.WithWatch), &writes)
	r := NewReconciler(c, base, clocktesting.NewFakePassiveClock(now.Time))
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	cached = true
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatalf("reconcile on the stale copy: %v", err)
	}
	testkit.Diff(t, "status writes", 1, writes)
}

func TestOnlyPodsThatNeedAFirstConditionAreQueued(t *testing.T) {
	type tcase struct {
		pod  *corev1.Pod
		want bool
	}
	tests := map[string]tcase{
		"a new workload pod":                  {pod: builder.Pod("p", "ns").ReadinessGate(appspub.InPlaceUpdateReady).ReadinessGate(appspub.KruisePodReadyConditionType).Obj(), want: true},
		"a pod that has its condition":        {pod: builder.Pod("p", "ns").ReadinessGate(appspub.KruisePodReadyConditionType).Condition(appspub.KruisePodReadyConditionType, corev1.ConditionTrue).Obj()},
		"a pod gated on some other condition": {pod: builder.Pod("p", "ns").ReadinessGate("example.com/ready").Obj()},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		if got := needsInitialCondition(tt.pod); got != tt.want {
			t.Errorf("needsInitialCondition = %v, want %v", got, tt.want)
		}
	})
}

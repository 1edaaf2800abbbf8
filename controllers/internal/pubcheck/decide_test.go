package pubcheck

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func readyPod(name string) *builder.PodBuilder {
	return builder.Pod(name, "ns").Phase(corev1.PodRunning).Condition(corev1.PodReady, corev1.ConditionTrue).
		Annotation(policyv1alpha1.PodRelatedPubAnnotation, "pub")
}

func budget(desired, allowed int32) *policyv1alpha1.PodUnavailableBudget {
	pub := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Name: "pub", Namespace: "ns"}}
	pub.Status.DesiredAvailable, pub.Status.UnavailableAllowed = desired, allowed
	return pub
}

func TestNeeds(t *testing.T) {
	withOps := func(ops string) *policyv1alpha1.PodUnavailableBudget {
		p := budget(2, 1)
		p.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: ops}
		return p
	}
	recorded := budget(2, 0)
	recorded.Status.DisruptedPods = map[string]metav1.Time{"a": metav1.Now()}
	tests := map[string]struct {
		pod  *corev1.Pod
		pub  *policyv1alpha1.PodUnavailableBudget
		op   policyv1alpha1.PubOperation
		want Verdict
	}{
		"a ready covered pod's deletion counts against its budget": {
			pod: readyPod("a").Obj(), pub: budget(2, 1), op: policyv1alpha1.PubDeleteOperation, want: Count,
		},
		"a pod with pub.kruise.io/no-protect=true passes": {
			pod: readyPod("a").Annotation(policyv1alpha1.PodPubNoProtectionAnnotation, "true").Obj(), pub: budget(2, 0), op: policyv1alpha1.PubDeleteOperation, want: Pass,
		},
		"a pod that is not ready passes: it is unavailable already": {
			pod: builder.Pod("a", "ns").Phase(corev1.PodRunning).Obj(), pub: budget(2, 0), op: policyv1alpha1.PubEvictOperation, want: Pass,
		},
		"a pod with an unavailable-pod.kruise.io/ label passes: it is unavailable already": {
			pod: readyPod("a").Label("unavailable-pod.kruise.io/maintain", "true").Obj(), pub: budget(2, 0), op: policyv1alpha1.PubDeleteOperation, want: Pass,
		},
		"a pod no budget covers passes": {
			pod: readyPod("a").Obj(), pub: nil, op: policyv1alpha1.PubDeleteOperation, want: Pass,
		},
		"every pod of a budget that desires no available pods passes": {
			pod: readyPod("a").Obj(), pub: budget(0, 0), op: policyv1alpha1.PubDeleteOperation, want: Pass,
		},
		"an operation the protect-operations annotation leaves out passes": {
			pod: readyPod("a").Obj(), pub: withOps("DELETE"), op: policyv1alpha1.PubEvictOperation, want: Pass,
		},
		"an operation the protect-operations annotation lists counts": {
			pod: readyPod("a").Obj(), pub: withOps("DELETE,EVICT"), op: policyv1alpha1.PubEvictOperation, want: Count,
		},
		"a pod already recorded in the budget passes: its room is taken": {
			pod: readyPod("a").Obj(), pub: recorded, op: policyv1alpha1.PubDeleteOperation, want: Pass,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Needs(tc.pod, tc.pub, tc.op); got != tc.want {
				t.Errorf("Needs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTake(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	full := budget(2, 1)
	full.Status.DisruptedPods = map[string]metav1.Time{}
	for i := range MaxRecordedPods + 1 {
		full.Status.DisruptedPods[string(rune('a'+i%26))+time.Duration(i).String()] = metav1.NewTime(now)
	}
	tests := map[string]struct {
		pub             *policyv1alpha1.PodUnavailableBudget
		op              policyv1alpha1.PubOperation
		wantForbidden   bool
		wantAllowed     int32
		wantDisrupted   map[string]metav1.Time
		wantUnavailable map[string]metav1.Time
	}{
		"a deletion takes one unit of room and records the pod in disruptedPods": {
			pub: budget(2, 1), op: policyv1alpha1.PubDeleteOperation,
			wantAllowed: 0, wantDisrupted: map[string]metav1.Time{"a": metav1.NewTime(now)},
		},
		"an update takes one unit of room and records the pod in unavailablePods": {
			pub: budget(2, 2), op: policyv1alpha1.PubUpdateOperation,
			wantAllowed: 1, wantUnavailable: map[string]metav1.Time{"a": metav1.NewTime(now)},
		},
		"a budget without room refuses and is left as it was": {
			pub: budget(2, 0), op: policyv1alpha1.PubEvictOperation, wantForbidden: true, wantAllowed: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Take(tc.pub, "a", tc.op, now)
			if got := apierrors.IsForbidden(err); got != tc.wantForbidden {
				t.Fatalf("Take error = %v, want forbidden %v", err, tc.wantForbidden)
			}
			if tc.pub.Status.UnavailableAllowed != tc.wantAllowed {
				t.Errorf("unavailableAllowed = %d, want %d", tc.pub.Status.UnavailableAllowed, tc.wantAllowed)
			}
			testkit.Diff(t, "disruptedPods", tc.wantDisrupted, tc.pub.Status.DisruptedPods)
			testkit.Diff(t, "unavailablePods", tc.wantUnavailable, tc.pub.Status.UnavailablePods)
		})
	}
	t.Run("a budget with more than MaxRecordedPods records refuses", func(t *testing.T) {
		if err := Take(full, "new", policyv1alpha1.PubDeleteOperation, now); !apierrors.IsForbidden(err) {
			t.Fatalf("Take error = %v, want forbidden", err)
		}
	})
}

func TestUpdateDisrupts(t *testing.T) {
	base := readyPod("a").Image("app:1").Obj()
	tests := map[string]struct {
		cur  *corev1.Pod
		want bool
	}{
		"an image change may disrupt":                     {cur: readyPod("a").Image("app:2").Obj(), want: true},
		"a new unavailable-pod.kruise.io/ label disrupts": {cur: readyPod("a").Image("app:1").Label("unavailable-pod.kruise.io/x", "1").Obj(), want: true},
		"a label or annotation change alone does not":     {cur: readyPod("a").Image("app:1").Label("team", "x").Obj(), want: false},
		"a status-only difference does not":               {cur: readyPod("a").Image("app:1").Phase(corev1.PodPending).Obj(), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := UpdateDisrupts(base, tc.cur); got != tc.want {
				t.Errorf("UpdateDisrupts = %v, want %v", got, tc.want)
			}
		})
	}
}

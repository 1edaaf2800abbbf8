package uniteddeployment

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// readyPod is a running pod of subset at revision, ready or not.
func readyPod(subset, rev string, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{appsv1alpha1.SubSetNameLabelKey: subset, appsv1alpha1.ControllerRevisionHashLabelKey: rev}}}
	p.Status.Phase = corev1.PodRunning
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

func TestComputeStatus(t *testing.T) {
	type view struct {
		Replicas, Ready, Updated, UpdatedReady int32
		Current, UpdatedRevision               string
		Selector                               string
		Conditions                             map[appsv1alpha1.UnitedDeploymentConditionType]corev1.ConditionStatus
	}
	rollout := func(lastReady bool) *scope {
		ud := testUD(2, "a", "b")
		ud.Status.CurrentRevision = "web-old"
		s := testScope(ud, workload("a", "web-a-1", "web-new", 1, 1, 1, 1), workload("b", "web-b-1", "web-new", 1, 1, 1, 1))
		s.Current = &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-old"}}
		s.pods = map[string][]*corev1.Pod{"a": {readyPod("a", "web-new", true)}, "b": {readyPod("b", "web-new", lastReady)}}
		return s
	}
	updated := map[appsv1alpha1.UnitedDeploymentConditionType]corev1.ConditionStatus{appsv1alpha1.SubsetUpdated: corev1.ConditionTrue}
	type tcase struct {
		scope *scope
		out   outcome
		want  view
	}
	cases := map[string]tcase{
		"a rollout whose every pod is updated and ready moves currentRevision to the update revision": {
			scope: rollout(true),
			want:  view{Replicas: 2, Ready: 2, Updated: 2, UpdatedReady: 2, Current: "web-new", UpdatedRevision: "web-new", Selector: "app=web", Conditions: updated},
		},
		"a rollout with an updated pod not ready yet keeps currentRevision": {
			scope: rollout(false),
			want:  view{Replicas: 2, Ready: 2, Updated: 2, UpdatedReady: 1, Current: "web-old", UpdatedRevision: "web-new", Selector: "app=web", Conditions: updated},
		},
		"a failed subset update and a provisioned subset show in the conditions": {
			scope: rollout(true),
			out:   outcome{provisioned: true, updateErr: errors.New("conflict")},
			want: view{Replicas: 2, Ready: 2, Updated: 2, UpdatedReady: 2, Current: "web-new", UpdatedRevision: "web-new", Selector: "app=web",
				Conditions: map[appsv1alpha1.UnitedDeploymentConditionType]corev1.ConditionStatus{
					appsv1alpha1.SubsetUpdated: corev1.ConditionFalse, appsv1alpha1.SubsetProvisioned: corev1.ConditionTrue}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, c tcase) {
		p := decide(c.scope, planNow)
		st := computeStatus(c.scope, p, c.out, planNow)
		got := view{Replicas: st.Replicas, Ready: st.ReadyReplicas, Updated: st.UpdatedReplicas, UpdatedReady: st.UpdatedReadyReplicas,
			Current: st.CurrentRevision, UpdatedRevision: st.UpdateStatus.UpdatedRevision, Selector: st.LabelSelector,
			Conditions: map[appsv1alpha1.UnitedDeploymentConditionType]corev1.ConditionStatus{}}
		for _, cond := range st.Conditions {
			got.Conditions[cond.Type] = cond.Status
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("status (-want +got):\n%s", d)
		}
		if st.ObservedGeneration != c.scope.ud.Generation {
			t.Errorf("observedGeneration %d, want %d", st.ObservedGeneration, c.scope.ud.Generation)
		}
	})
}

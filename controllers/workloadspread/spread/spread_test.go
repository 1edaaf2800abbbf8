package spread

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func subset(name string, max *intstr.IntOrString) appsv1alpha1.WorkloadSpreadSubset {
	return appsv1alpha1.WorkloadSpreadSubset{Name: name, MaxReplicas: max}
}

func ip(v int) *intstr.IntOrString     { return ptr.To(intstr.FromInt32(int32(v))) }
func pct(v string) *intstr.IntOrString { return ptr.To(intstr.FromString(v)) }
func st(name string, missing int32) appsv1alpha1.WorkloadSpreadSubsetStatus {
	return appsv1alpha1.WorkloadSpreadSubsetStatus{Name: name, MissingReplicas: missing}
}
func unschedulable(s appsv1alpha1.WorkloadSpreadSubsetStatus) appsv1alpha1.WorkloadSpreadSubsetStatus {
	s.Conditions = []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: appsv1alpha1.SubsetSchedulable, Status: corev1.ConditionFalse}}
	return s
}

// recorded gives w the subset statuses a controller or webhook wrote.
func recorded(w *appsv1alpha1.WorkloadSpread, statuses ...appsv1alpha1.WorkloadSpreadSubsetStatus) *appsv1alpha1.WorkloadSpread {
	w.Status.SubsetStatuses = statuses
	return w
}

// counted gives s its replicas and the pods being created into and deleted from it.
func counted(s appsv1alpha1.WorkloadSpreadSubsetStatus, replicas int32, creating, deleting []string) appsv1alpha1.WorkloadSpreadSubsetStatus {
	s.Replicas = replicas
	for _, p := range creating {
		s.CreatingPods = setAt(s.CreatingPods, p)
	}
	for _, p := range deleting {
		s.DeletingPods = setAt(s.DeletingPods, p)
	}
	return s
}

func setAt(m map[string]metav1.Time, k string) map[string]metav1.Time {
	if m == nil {
		m = map[string]metav1.Time{}
	}
	m[k] = t0
	return m
}

func ws(subsets ...appsv1alpha1.WorkloadSpreadSubset) *appsv1alpha1.WorkloadSpread {
	return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: "ns"},
		Spec: appsv1alpha1.WorkloadSpreadSpec{Subsets: subsets}}
}

func TestStatuses(t *testing.T) {
	type tcase struct {
		ws       *appsv1alpha1.WorkloadSpread
		replicas int32
		want     []appsv1alpha1.WorkloadSpreadSubsetStatus
	}
	cases := map[string]tcase{
		"a fresh subset misses its int maxReplicas": {
			ws: ws(subset("a", ip(3))), replicas: 10, want: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 3)}},
		"a percentage is of the target's replicas, rounded up": {
			ws: ws(subset("a", pct("25%")), subset("b", pct("75%"))), replicas: 10,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 3), st("b", 8)}},
		"a subset without maxReplicas is unlimited": {
			ws: ws(subset("a", nil)), replicas: 10, want: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", Unlimited)}},
		"a recorded status is kept, in spec order": {
			ws: func() *appsv1alpha1.WorkloadSpread {
				w := ws(subset("a", ip(3)), subset("b", ip(3)))
				w.Status.SubsetStatuses = []appsv1alpha1.WorkloadSpreadSubsetStatus{st("b", 1), st("a", 0)}
				return w
			}(), replicas: 6,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 0), st("b", 1)}},
		"a percentage recorded before the target was seen is resolved against the replicas now": {
			ws: recorded(ws(subset("a", pct("20%")), subset("b", pct("30%")), subset("c", nil)),
				st("a", 0), st("b", 0), st("c", Unlimited)), replicas: 6,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 2), st("b", 2), st("c", Unlimited)}},
		"a percentage recorded against fewer replicas grows with the target": {
			ws: recorded(ws(subset("a", pct("20%"))), counted(st("a", 0), 2, nil, nil)), replicas: 12,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{counted(st("a", 1), 2, nil, nil)}},
		"a percentage subset misses its limit less its replicas and creating pods, plus its deleting pods": {
			ws: recorded(ws(subset("a", pct("50%"))),
				counted(st("a", 0), 1, []string{"new"}, []string{"old"})), replicas: 6,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{counted(st("a", 2), 1, []string{"new"}, []string{"old"})}},
		"a percentage subset fuller than its limit for the replicas now misses none": {
			ws: recorded(ws(subset("a", pct("20%"))), counted(st("a", 3), 3, nil, nil)), replicas: 6,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{counted(st("a", 0), 3, nil, nil)}},
		"an int subset keeps the missingReplicas recorded, whatever the replicas": {
			ws: recorded(ws(subset("a", ip(2))), counted(st("a", 1), 0, nil, nil)), replicas: 600,
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{counted(st("a", 1), 0, nil, nil)}},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, err := Statuses(tc.ws, tc.replicas)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "statuses", tc.want, got)
	})
}

func TestPick(t *testing.T) {
	type tcase struct {
		statuses []appsv1alpha1.WorkloadSpreadSubsetStatus
		want     int
	}
	cases := map[string]tcase{
		"the first subset with room takes the pod":       {statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 1), st("b", 5)}, want: 0},
		"a full subset is passed over":                   {statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 0), st("b", 5)}, want: 1},
		"an unlimited subset always has room":            {statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 0), st("b", Unlimited)}, want: 1},
		"an unschedulable subset is passed over":         {statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{unschedulable(st("a", 3)), st("b", 1)}, want: 1},
		"no subset with room leaves the pod without one": {statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 0), st("b", 0)}, want: -1},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "pick", tc.want, Pick(tc.statuses))
	})
}

func TestRecordCreateCountsPodsInFlight(t *testing.T) {
	// Three creations against a subset of two: the third must go to the next subset, which is
	// what keeps concurrent creations from overfilling a subset.
	statuses := []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 2), st("b", Unlimited)}
	var got []string
	for _, pod := range []string{"p1", "p2", "p3"} {
		i := Pick(statuses)
		RecordCreate(statuses, i, pod, t0)
		got = append(got, statuses[i].Name)
	}
	if diff := cmp.Diff([]string{"a", "a", "b"}, got); diff != "" {
		t.Errorf("subsets (-want +got):\n%s", diff)
	}
	want := map[string]metav1.Time{"p1": t0, "p2": t0}
	testkit.Diff(t, "creatingPods of a", want, statuses[0].CreatingPods)
	if statuses[1].CreatingPods != nil {
		t.Errorf("an unlimited subset records no creating pods, got %v", statuses[1].CreatingPods)
	}
}

func TestRecordDelete(t *testing.T) {
	type tcase struct {
		statuses    []appsv1alpha1.WorkloadSpreadSubsetStatus
		subset, pod string
		wantChanged bool
		wantMissing int32
	}
	cases := map[string]tcase{
		"a deleted pod frees a replica of its subset": {
			statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 0)}, subset: "a", pod: "p", wantChanged: true, wantMissing: 1},
		"a pod already being deleted is counted once": {
			statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{{Name: "a", MissingReplicas: 1, DeletingPods: map[string]metav1.Time{"p": t0}}},
			subset:   "a", pod: "p", wantMissing: 1},
		"an unlimited subset is not written": {
			statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", Unlimited)}, subset: "a", pod: "p", wantMissing: Unlimited},
		"an unknown subset changes nothing": {
			statuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{st("a", 0)}, subset: "gone", pod: "p", wantMissing: 0},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		changed := RecordDelete(tc.statuses, tc.subset, tc.pod, t0)
		testkit.Diff(t, "changed", tc.wantChanged, changed)
		testkit.Diff(t, "missingReplicas", tc.wantMissing, tc.statuses[0].MissingReplicas)
	})
}

func TestPickByOrdinal(t *testing.T) {
	w := ws(subset("a", ip(2)), subset("b", ip(3)), subset("c", nil))
	type tcase struct {
		ws   *appsv1alpha1.WorkloadSpread
		pod  string
		want string
	}
	cases := map[string]tcase{
		"ordinals below the first limit go to the first subset": {ws: w, pod: "web-1", want: "a"},
		"the next ordinals go to the next subset":               {ws: w, pod: "web-2", want: "b"},
		"the unlimited subset takes every ordinal left":         {ws: w, pod: "web-40", want: "c"},
		"a name without an ordinal gets no subset":              {ws: w, pod: "web", want: ""},
		"an unschedulable subset gives its range to the next": {ws: func() *appsv1alpha1.WorkloadSpread {
			c := w.DeepCopy()
			c.Status.SubsetStatuses = []appsv1alpha1.WorkloadSpreadSubsetStatus{unschedulable(st("a", 0))}
			return c
		}(), pod: "web-1", want: "b"},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "subset", tc.want, PickByOrdinal(tc.ws, tc.pod))
	})
}

func TestInject(t *testing.T) {
	zoneA := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	ssd := corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}
	gpu := corev1.NodeSelectorRequirement{Key: "gpu", Operator: corev1.NodeSelectorOpExists}
	spot := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists}
	pref := corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{ssd}}}
	required := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	term := func(r ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: r}
	}
	type tcase struct {
		pod     corev1.PodSpec
		subset  appsv1alpha1.WorkloadSpreadSubset
		uid     string
		want    corev1.PodSpec
		wantAnn string
		wantLbl map[string]string
	}
	cases := map[string]tcase{
		"the required term becomes the pod's only term": {
			subset:  appsv1alpha1.WorkloadSpreadSubset{Name: "a", RequiredNodeSelectorTerm: ptr.To(term(zoneA))},
			want:    corev1.PodSpec{Affinity: required(term(zoneA))},
			wantAnn: `{"name":"ws","subset":"a"}`,
		},
		"the required term joins every term the pod already has": {
			pod:     corev1.PodSpec{Affinity: required(term(ssd), term(gpu))},
			subset:  appsv1alpha1.WorkloadSpreadSubset{Name: "a", RequiredNodeSelectorTerm: ptr.To(term(zoneA))},
			want:    corev1.PodSpec{Affinity: required(term(ssd, zoneA), term(gpu, zoneA))},
			wantAnn: `{"name":"ws","subset":"a"}`,
		},
		"preferred terms and tolerations are appended": {
			pod:    corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}}},
			subset: appsv1alpha1.WorkloadSpreadSubset{Name: "b", PreferredNodeSelectorTerms: []corev1.PreferredSchedulingTerm{pref}, Tolerations: []corev1.Toleration{spot}},
			want: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}, spot},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{pref}}}},
			wantAnn: `{"name":"ws","subset":"b"}`,
		},
		"a pod without a name carries the generated uid": {
			subset: appsv1alpha1.WorkloadSpreadSubset{Name: "c"}, uid: "u-1",
			wantAnn: `{"name":"ws","subset":"c","uid":"u-1"}`,
		},
		"the patch is merged and a changed priority class clears the priority": {
			pod: corev1.PodSpec{Priority: ptr.To(int32(5)), PriorityClassName: "low"},
			subset: appsv1alpha1.WorkloadSpreadSubset{Name: "d", Patch: runtime.RawExtension{
				Raw: []byte(`{"metadata":{"labels":{"tier":"spot"}},"spec":{"priorityClassName":"high"}}`)}},
			want:    corev1.PodSpec{PriorityClassName: "high"},
			wantAnn: `{"name":"ws","subset":"d"}`,
			wantLbl: map[string]string{"tier": "spot"},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: tc.pod}
		if err := Inject(pod, "ws", &tc.subset, tc.uid); err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "spec", tc.want, pod.Spec)
		testkit.Diff(t, "annotation", tc.wantAnn, pod.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations])
		testkit.Diff(t, "labels", tc.wantLbl, pod.Labels)
	})
}

func TestInjectRefusesABadPatch(t *testing.T) {
	s := appsv1alpha1.WorkloadSpreadSubset{Name: "a", Patch: runtime.RawExtension{Raw: []byte(`{"spec":{"containers":"nope"}}`)}}
	if err := Inject(&corev1.Pod{}, "ws", &s, ""); err == nil {
		t.Fatal("a patch that does not fit a pod must be an error")
	}
}

func TestInjectedRoundTrip(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations: `{"name":"ws","subset":"a","uid":"u"}`}}}
	got, ok, err := InjectedOf(pod)
	if err != nil || !ok {
		t.Fatalf("InjectedOf = %v, %v", ok, err)
	}
	if diff := cmp.Diff(Injected{Name: "ws", Subset: "a", UID: "u"}, got); diff != "" {
		t.Errorf("injected (-want +got):\n%s", diff)
	}
	pod.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations] = "{"
	if _, _, err := InjectedOf(pod); err == nil {
		t.Error("an annotation that does not parse must be an error")
	}
}

func readyPod(name string, created time.Duration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(created))},
		Spec:       corev1.PodSpec{NodeName: "n"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(created))}}},
	}
}

func TestDeletionCosts(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-pending"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	type tcase struct {
		subsets  []appsv1alpha1.WorkloadSpreadSubset
		bySubset map[string][]*corev1.Pod
		replicas int32
		want     map[string]string
	}
	cases := map[string]tcase{
		"pods within their limits cost 100 times the subsets left from theirs": {
			subsets:  []appsv1alpha1.WorkloadSpreadSubset{subset("a", ip(2)), subset("b", ip(2)), subset("c", nil)},
			bySubset: map[string][]*corev1.Pod{"a": {readyPod("a1", 0)}, "b": {readyPod("b1", 0)}, "c": {readyPod("c1", 0), readyPod("c2", 0)}},
			want:     map[string]string{"a1": "300", "b1": "200", "c1": "100", "c2": "100"},
		},
		"the pods above a subset's limit cost -100 times its position, newest first": {
			subsets:  []appsv1alpha1.WorkloadSpreadSubset{subset("a", ip(1)), subset("b", nil)},
			bySubset: map[string][]*corev1.Pod{"a": {readyPod("a-old", 0), readyPod("a-new", time.Hour)}},
			want:     map[string]string{"a-old": "200", "a-new": "-100"},
		},
		"a pod that is not running is the extra one before a ready one": {
			subsets:  []appsv1alpha1.WorkloadSpreadSubset{subset("a", ip(1)), subset("b", nil)},
			bySubset: map[string][]*corev1.Pod{"a": {readyPod("a-new", time.Hour), pending}},
			want:     map[string]string{"a-new": "200", "a-pending": "-100"},
		},
		"a percentage limit is of the target's replicas: 50% of 2 leaves one pod of b extra": {
			subsets:  []appsv1alpha1.WorkloadSpreadSubset{subset("a", pct("50%")), subset("b", pct("50%"))},
			bySubset: map[string][]*corev1.Pod{"b": {readyPod("b1", 0), readyPod("b2", time.Hour)}},
			replicas: 2,
			want:     map[string]string{"b1": "100", "b2": "-200"},
		},
		"pods in no subset cost least of all": {
			subsets:  []appsv1alpha1.WorkloadSpreadSubset{subset("a", ip(1)), subset("b", nil)},
			bySubset: map[string][]*corev1.Pod{"": {readyPod("stray", 0)}},
			want:     map[string]string{"stray": "-300"},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, err := DeletionCosts(tc.subsets, tc.bySubset, tc.replicas)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "costs", tc.want, got)
	})
}

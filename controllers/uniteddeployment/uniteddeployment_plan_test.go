package uniteddeployment

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var planNow = time.Unix(100000, 0)

// testUD is a UnitedDeployment of CloneSet subsets named after zones.
func testUD(replicas int32, zones ...string) *appsv1alpha1.UnitedDeployment {
	ud := &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "ud-uid", Generation: 3}}
	ud.Spec.Replicas = ptr.To(replicas)
	ud.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	ud.Spec.Template.CloneSetTemplate = &appsv1alpha1.CloneSetTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	ud.Spec.Template.CloneSetTemplate.Spec.Template.Labels = map[string]string{"app": "web"}
	ud.Spec.Template.CloneSetTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx:1"}}
	for _, z := range zones {
		ud.Spec.Topology.Subsets = append(ud.Spec.Topology.Subsets, appsv1alpha1.Subset{Name: z,
			NodeSelectorTerm: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{z}}}}})
	}
	return ud
}

// workload is the CloneSet of subset at revision with spec replicas, status replicas and ready.
func workload(subset, name, rev string, spec, have, ready int32, created int64) subsetWorkload {
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.Unix(created, 0),
		Labels:      map[string]string{appsv1alpha1.SubSetNameLabelKey: subset, appsv1alpha1.ControllerRevisionHashLabelKey: rev},
		Annotations: map[string]string{appsv1alpha1.AnnotationSubsetPatchKey: ""}}}
	cs.Spec.Replicas = ptr.To(spec)
	p := intstr.FromInt32(0)
	cs.Spec.UpdateStrategy.Partition = &p
	cs.Status.Replicas, cs.Status.ReadyReplicas = have, ready
	return subsetWorkload{subset: subset, obj: cs, state: cloneSets.read(cs)}
}

// pendingPod is a pod of subset that the scheduler found no node for, created age ago.
func pendingPod(subset string, age time.Duration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: subset + "-pending", CreationTimestamp: metav1.NewTime(planNow.Add(-age)),
		Labels: map[string]string{appsv1alpha1.SubSetNameLabelKey: subset}}}
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	return p
}

func testScope(ud *appsv1alpha1.UnitedDeployment, ws ...subsetWorkload) *scope {
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-new"}}
	return &scope{ud: ud, kind: cloneSets, workloads: ws, pods: map[string][]*corev1.Pod{}, Tracked: revision.Tracked{Revisions: revision.Revisions{Current: rev, Update: rev}}}
}

// adaptive makes ud Adaptive with a 30s critical time and 300s unschedulable time.
func adaptive(ud *appsv1alpha1.UnitedDeployment) *appsv1alpha1.UnitedDeployment {
	ud.Spec.Topology.ScheduleStrategy = appsv1alpha1.UnitedDeploymentScheduleStrategy{Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
		Adaptive: &appsv1alpha1.AdaptiveUnitedDeploymentStrategy{RescheduleCriticalSeconds: ptr.To[int32](30), UnschedulableLastSeconds: ptr.To[int32](300)}}
	ud.Spec.Topology.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(4))
	return ud
}

// unschedulableSince gives subset a Schedulable=False condition from at.
func unschedulableSince(ud *appsv1alpha1.UnitedDeployment, subset string, at time.Time) *appsv1alpha1.UnitedDeployment {
	ud.Status.SubsetStatuses = append(ud.Status.SubsetStatuses, appsv1alpha1.UnitedDeploymentSubsetStatus{Name: subset,
		Conditions: []appsv1alpha1.UnitedDeploymentSubsetCondition{{Type: appsv1alpha1.UnitedDeploymentSubsetSchedulable, Status: corev1.ConditionFalse, Reason: "reschedule", LastTransitionTime: metav1.NewTime(at)}}})
	return ud
}

func names(objs []client.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return out
}

func TestDecide(t *testing.T) {
	type tcase struct {
		scope   *scope
		pods    map[string][]*corev1.Pod
		want    map[string]int32
		creates []string
		updates []string
		deletes []string
		// schedulable is each subset's Schedulable condition status, "" for none.
		schedulable  map[string]corev1.ConditionStatus
		wantRequeue  time.Duration
		wantAllocErr bool
	}
	cases := map[string]tcase{
		"a subset without a workload gets one created": {
			scope:   testScope(testUD(6, "a", "b", "c"), workload("a", "web-a-1", "web-new", 2, 2, 2, 1)),
			want:    map[string]int32{"a": 2, "b": 2, "c": 2},
			creates: []string{"b", "c"},
		},
		"a template change moves every subset workload to the new revision": {
			scope:   testScope(testUD(4, "a", "b"), workload("a", "web-a-1", "web-old", 2, 2, 2, 1), workload("b", "web-b-1", "web-old", 2, 2, 2, 1)),
			want:    map[string]int32{"a": 2, "b": 2},
			updates: []string{"a", "b"},
		},
		"a workload already at its revision, replicas and partition is left alone": {
			scope: testScope(testUD(4, "a", "b"), workload("a", "web-a-1", "web-new", 2, 2, 2, 1), workload("b", "web-b-1", "web-new", 2, 2, 2, 1)),
			want:  map[string]int32{"a": 2, "b": 2},
		},
		"a scale-up reaches the subsets whose replicas change": {
			scope:   testScope(testUD(5, "a", "b"), workload("a", "web-a-1", "web-new", 2, 2, 2, 1), workload("b", "web-b-1", "web-new", 2, 2, 2, 1)),
			want:    map[string]int32{"a": 2, "b": 3},
			updates: []string{"b"},
		},
		"a removed subset's workload is deleted": {
			scope:   testScope(testUD(2, "a"), workload("a", "web-a-1", "web-new", 2, 2, 2, 1), workload("gone", "web-gone-1", "web-new", 2, 2, 2, 1)),
			want:    map[string]int32{"a": 2},
			deletes: []string{"web-gone-1"},
		},
		"of two workloads of one subset the newer is deleted": {
			scope:   testScope(testUD(2, "a"), workload("a", "web-a-1", "web-new", 2, 2, 2, 1), workload("a", "web-a-2", "web-new", 2, 2, 2, 5)),
			want:    map[string]int32{"a": 2},
			deletes: []string{"web-a-2"},
		},
		"replicas the spec cannot allocate change nothing": {
			scope: func() *scope {
				ud := testUD(2, "a", "b")
				ud.Spec.Topology.Subsets[0].Replicas = ptr.To(intstr.FromInt32(5))
				return testScope(ud, workload("a", "web-a-1", "web-old", 2, 2, 2, 1))
			}(),
			wantAllocErr: true,
		},
		"adaptive: a pod unschedulable past rescheduleCriticalSeconds marks its subset unschedulable and moves its replicas on": {
			scope: testScope(adaptive(testUD(6, "a", "b")), workload("a", "web-a-1", "web-new", 4, 4, 3, 1), workload("b", "web-b-1", "web-new", 2, 2, 2, 1)),
			pods:  map[string][]*corev1.Pod{"a": {pendingPod("a", 31*time.Second)}},
			want:  map[string]int32{"a": 3, "b": 3}, updates: []string{"a", "b"},
			schedulable: map[string]corev1.ConditionStatus{"a": corev1.ConditionFalse},
			// b grows, so its new pods are looked at after rescheduleCriticalSeconds.
			wantRequeue: 30 * time.Second,
		},
		"adaptive: a pod not yet unschedulable for rescheduleCriticalSeconds is waited for": {
			scope:       testScope(adaptive(testUD(6, "a", "b")), workload("a", "web-a-1", "web-new", 4, 4, 3, 1), workload("b", "web-b-1", "web-new", 2, 2, 2, 1)),
			pods:        map[string][]*corev1.Pod{"a": {pendingPod("a", 10*time.Second)}},
			want:        map[string]int32{"a": 4, "b": 2},
			wantRequeue: 20 * time.Second,
		},
		"adaptive: an unschedulable subset takes no new replicas until unschedulableLastSeconds pass": {
			scope: testScope(unschedulableSince(adaptive(testUD(8, "a", "b")), "a", planNow.Add(-100*time.Second)),
				workload("a", "web-a-1", "web-new", 3, 3, 3, 1), workload("b", "web-b-1", "web-new", 3, 3, 3, 1)),
			want: map[string]int32{"a": 3, "b": 5}, updates: []string{"b"},
			schedulable: map[string]corev1.ConditionStatus{"a": corev1.ConditionFalse},
			wantRequeue: 30 * time.Second,
		},
		"adaptive: after unschedulableLastSeconds the subset is tried again": {
			scope: testScope(unschedulableSince(adaptive(testUD(8, "a", "b")), "a", planNow.Add(-301*time.Second)),
				workload("a", "web-a-1", "web-new", 3, 3, 3, 1), workload("b", "web-b-1", "web-new", 3, 3, 3, 1)),
			want: map[string]int32{"a": 4, "b": 4}, updates: []string{"a", "b"},
			schedulable: map[string]corev1.ConditionStatus{"a": corev1.ConditionTrue},
			wantRequeue: 30 * time.Second,
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, c tcase) {
		if c.pods != nil {
			c.scope.pods = c.pods
		}
		p := decide(c.scope, planNow)
		if (p.allocErr != nil) != c.wantAllocErr {
			t.Fatalf("allocErr = %v, want error %v", p.allocErr, c.wantAllocErr)
		}
		if c.wantAllocErr {
			if len(p.creates)+len(p.updates)+len(p.deletes) > 0 {
				t.Errorf("plan changes workloads despite the allocation error: %+v", p)
			}
			return
		}
		var updates []string
		for _, w := range p.updates {
			updates = append(updates, w.subset)
		}
		sort.Strings(updates)
		got := struct {
			Replicas                  map[string]int32
			Creates, Updates, Deletes []string
			Requeue                   time.Duration
		}{p.replicas, p.creates, updates, names(p.deletes), p.requeueAfter}
		want := got
		want.Replicas, want.Creates, want.Updates, want.Deletes, want.Requeue = c.want, c.creates, c.updates, c.deletes, c.wantRequeue
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("plan (-want +got):\n%s", d)
		}
		gotSched := map[string]corev1.ConditionStatus{}
		for _, st := range p.subsetStatuses {
			if cond := st.GetCondition(appsv1alpha1.UnitedDeploymentSubsetSchedulable); cond != nil {
				gotSched[st.Name] = cond.Status
			}
		}
		if c.schedulable == nil {
			c.schedulable = map[string]corev1.ConditionStatus{}
		}
		if d := cmp.Diff(c.schedulable, gotSched); d != "" {
			t.Errorf("Schedulable conditions (-want +got):\n%s", d)
		}
	})
}

func TestPartitionsAreCappedAtReplicas(t *testing.T) {
	ud := testUD(4, "a", "b")
	ud.Spec.UpdateStrategy = appsv1alpha1.UnitedDeploymentUpdateStrategy{Type: appsv1alpha1.ManualUpdateStrategyType,
		ManualUpdate: &appsv1alpha1.ManualUpdate{Partitions: map[string]int32{"a": 1, "b": 9}}}
	got := partitions(ud, map[string]int32{"a": 2, "b": 2})
	if d := cmp.Diff(map[string]int32{"a": 1, "b": 2}, got); d != "" {
		t.Errorf("partitions (-want +got):\n%s", d)
	}
}

func TestBuildSubset(t *testing.T) {
	ud := testUD(4, "zone-a")
	ud.Spec.Template.CloneSetTemplate.Labels["team"] = "blue"
	ud.Spec.Template.CloneSetTemplate.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}}}
	sub := &ud.Spec.Topology.Subsets[0]
	sub.Tolerations = []corev1.Toleration{{Key: "zone-a", Operator: corev1.TolerationOpExists}}
	sub.Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"zone":"a"}},"spec":{"containers":[{"name":"c","env":[{"name":"ZONE","value":"a"}]}]}}`)}

	cs := &appsv1alpha1.CloneSet{}
	if err := buildSubset(cloneSets, ud, sub, "web-abc", 3, 1, cs); err != nil {
		t.Fatal(err)
	}
	tmpl := cs.Spec.Template
	got := map[string]any{
		"generateName":   cs.GenerateName,
		"labels":         cs.Labels,
		"patch":          cs.Annotations[appsv1alpha1.AnnotationSubsetPatchKey],
		"owner":          cs.OwnerReferences[0].Kind + "/" + cs.OwnerReferences[0].Name,
		"selector":       cs.Spec.Selector.MatchLabels,
		"replicas":       *cs.Spec.Replicas,
		"partition":      cs.Spec.UpdateStrategy.Partition.String(),
		"podLabels":      tmpl.Labels,
		"nodeSelector":   tmpl.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
		"tolerations":    tmpl.Spec.Tolerations,
		"containerImage": tmpl.Spec.Containers[0].Image,
		"containerEnv":   tmpl.Spec.Containers[0].Env,
	}
	want := map[string]any{
		"generateName": "web-zone-a-",
		"labels": map[string]string{"app": "web", "team": "blue",
			appsv1alpha1.SubSetNameLabelKey: "zone-a", appsv1alpha1.ControllerRevisionHashLabelKey: "web-abc"},
		"patch":     string(sub.Patch.Raw),
		"owner":     "UnitedDeployment/web",
		"selector":  map[string]string{"app": "web", appsv1alpha1.SubSetNameLabelKey: "zone-a"},
		"replicas":  int32(3),
		"partition": "1",
		"podLabels": map[string]string{"app": "web", "zone": "a",
			appsv1alpha1.SubSetNameLabelKey: "zone-a", appsv1alpha1.ControllerRevisionHashLabelKey: "web-abc"},
		"nodeSelector": []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}},
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}}}}},
		"tolerations":    []corev1.Toleration{{Key: "zone-a", Operator: corev1.TolerationOpExists}},
		"containerImage": "nginx:1",
		"containerEnv":   []corev1.EnvVar{{Name: "ZONE", Value: "a"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("subset CloneSet (-want +got):\n%s", d)
	}
	// The UnitedDeployment's own template is untouched.
	if n := len(ud.Spec.Template.CloneSetTemplate.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions); n != 1 {
		t.Errorf("the template's node selector term has %d expressions after building a subset, want 1", n)
	}
}

func TestSubsetPrefixFallsBackToTheUnitedDeploymentName(t *testing.T) {
	long := strings.Repeat("x", 250)
	if got := subsetPrefix("web", long); got != "web-" {
		t.Errorf("prefix for an over-long subset name %q, want web-", got)
	}
}

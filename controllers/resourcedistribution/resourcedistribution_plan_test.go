package resourcedistribution

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func ns(name string, labels map[string]string) corev1.Namespace {
	return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func terminating(name string, labels map[string]string) corev1.Namespace {
	n := ns(name, labels)
	n.DeletionTimestamp = &metav1.Time{}
	return n
}

func names(list ...string) appsv1alpha1.ResourceDistributionTargetNamespaces {
	out := appsv1alpha1.ResourceDistributionTargetNamespaces{}
	for _, n := range list {
		out.List = append(out.List, appsv1alpha1.ResourceDistributionNamespace{Name: n})
	}
	return out
}

func TestTargetNamespaces(t *testing.T) {
	namespaces := []corev1.Namespace{
		ns("default", nil), ns("kube-system", nil), ns("kube-public", nil),
		ns("team-a", map[string]string{"team": "a"}), ns("team-b", map[string]string{"team": "b"}),
		terminating("old-b", map[string]string{"team": "b"}),
	}
	type tcase struct {
		targets appsv1alpha1.ResourceDistributionTargets
		// excluded is --resourcedistribution-excluded-namespaces.
		excluded      []string
		wantMatched   []string
		wantUnmatched []string
	}
	cases := map[string]tcase{
		"no target selects nothing": {
			wantUnmatched: []string{"default", "kube-public", "kube-system", "old-b", "team-a", "team-b"},
		},
		"allNamespaces selects every live namespace but kube-system and kube-public": {
			targets:       appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true},
			wantMatched:   []string{"default", "team-a", "team-b"},
			wantUnmatched: []string{"kube-public", "kube-system", "old-b"},
		},
		"kube-system named in includedNamespaces is selected": {
			targets:       appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true, IncludedNamespaces: names("kube-system")},
			wantMatched:   []string{"default", "kube-system", "team-a", "team-b"},
			wantUnmatched: []string{"kube-public", "old-b"},
		},
		"a namespace excluded by the manager is never selected, even when named or matched": {
			targets: appsv1alpha1.ResourceDistributionTargets{
				IncludedNamespaces:     names("kube-system", "team-a"),
				NamespaceLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
			},
			excluded:      []string{"kube-system", "team-b"},
			wantMatched:   []string{"team-a"},
			wantUnmatched: []string{"default", "kube-public", "kube-system", "old-b", "team-b"},
		},
		"excludedNamespaces wins over allNamespaces": {
			targets:       appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true, ExcludedNamespaces: names("team-b")},
			wantMatched:   []string{"default", "team-a"},
			wantUnmatched: []string{"kube-public", "kube-system", "old-b", "team-b"},
		},
		"an included namespace that does not exist is still a target": {
			targets:       appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: names("team-a", "later", "old-b")},
			wantMatched:   []string{"later", "old-b", "team-a"},
			wantUnmatched: []string{"default", "kube-public", "kube-system", "team-b"},
		},
		"the label selector adds the live namespaces it matches to the included ones": {
			targets: appsv1alpha1.ResourceDistributionTargets{
				IncludedNamespaces:     names("default"),
				NamespaceLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
			},
			wantMatched:   []string{"default", "team-b"},
			wantUnmatched: []string{"kube-public", "kube-system", "old-b", "team-a"},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		matched, unmatched, err := targetNamespaces(&tc.targets, namespaces, sets.New(tc.excluded...))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.wantMatched, matched, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("matched (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(tc.wantUnmatched, unmatched, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("unmatched (-want +got):\n%s", diff)
		}
	})
}

func distribution() *appsv1alpha1.ResourceDistribution {
	return &appsv1alpha1.ResourceDistribution{
		ObjectMeta: metav1.ObjectMeta{Name: "rd", UID: "rd-uid", Generation: 3},
		Spec: appsv1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","labels":{"app":"x"}},"data":{"k":"v"}}`)}},
	}
}

func TestDecide(t *testing.T) {
	rd := distribution()
	resource, err := DecodeResource(rd.Spec.Resource.Raw)
	if err != nil {
		t.Fatal(err)
	}
	hash := HashResource(rd.Spec.Resource.Raw)
	ours := desiredCopy(rd, resource, hash, "team", nil)
	stale := ours.DeepCopy()
	_ = unstructured.SetNestedField(stale.Object, "old", "data", "k")
	relabelled := ours.DeepCopy()
	relabelled.SetLabels(map[string]string{"app": "changed", "extra": "kept"})
	withExtras := ours.DeepCopy()
	withExtras.SetLabels(map[string]string{"app": "x", "added-by-someone": "yes"})
	foreign := resource.DeepCopy()
	foreign.SetNamespace("team")
	type tcase struct {
		targeted, active bool
		existing         *unstructured.Unstructured
		want             action
	}
	cases := map[string]tcase{
		"a targeted namespace without the object gets a copy":                        {true, true, nil, actionCreate},
		"a copy in step is left alone":                                               {true, true, ours, actionNone},
		"a copy with labels and annotations added by others is left alone":           {true, true, withExtras, actionNone},
		"a copy with old data is updated":                                            {true, true, stale, actionUpdate},
		"a copy whose label from the resource changed is updated":                    {true, true, relabelled, actionUpdate},
		"an object this ResourceDistribution does not control is a conflict":         {true, true, foreign, actionConflict},
		"a targeted namespace that does not exist is reported":                       {true, false, nil, actionMissing},
		"a copy in a namespace no longer targeted is deleted":                        {false, true, ours, actionDelete},
		"an object of another owner in a namespace no longer targeted is left alone": {false, true, foreign, actionNone},
		"a namespace not targeted and without the object needs nothing":              {false, true, nil, actionNone},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		var want *unstructured.Unstructured
		if tc.targeted && tc.active {
			want = desiredCopy(rd, resource, hash, "team", tc.existing)
		}
		if got := decide(rd, tc.targeted, tc.active, tc.existing, want); got != tc.want {
			t.Errorf("decide = %q, want %q", got, tc.want)
		}
	})
}

func TestDesiredCopy(t *testing.T) {
	rd := distribution()
	resource, _ := DecodeResource(rd.Spec.Resource.Raw)
	existing := desiredCopy(rd, resource, "old-hash", "team", nil)
	existing.SetResourceVersion("42")
	existing.SetLabels(map[string]string{"app": "x", "mine": "1"})
	got := desiredCopy(rd, resource, "new-hash", "team", existing)

	if got.GetNamespace() != "team" || got.GetName() != "cfg" || got.GetResourceVersion() != "42" {
		t.Errorf("copy is %s/%s at %q, want team/cfg at the existing resourceVersion 42", got.GetNamespace(), got.GetName(), got.GetResourceVersion())
	}
	wantAnn := map[string]string{
		"kruise.io/resourcedistribution.resource.hashcode": "new-hash",
		"kruise.io/resourcedistribution.resource.from":     "rd",
	}
	testkit.Diff(t, "annotations", wantAnn, got.GetAnnotations())
	if diff := cmp.Diff(map[string]string{"app": "x", "mine": "1"}, got.GetLabels()); diff != "" {
		t.Errorf("labels keep the resource's and the existing ones (-want +got):\n%s", diff)
	}
	owners := got.GetOwnerReferences()
	if len(owners) != 1 || owners[0].UID != "rd-uid" || owners[0].Controller == nil || !*owners[0].Controller || owners[0].Kind != "ResourceDistribution" {
		t.Errorf("owner references %+v, want one controller reference to the ResourceDistribution", owners)
	}
}

func TestComputeStatus(t *testing.T) {
	before := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(before.Add(time.Hour))
	rd := distribution()
	rd.Status.Conditions = []appsv1alpha1.ResourceDistributionCondition{
		{Type: appsv1alpha1.ResourceDistributionConflictOccurred, Status: appsv1alpha1.ResourceDistributionConditionFalse, LastTransitionTime: before},
		{Type: appsv1alpha1.ResourceDistributionCreateResourceFailed, Status: appsv1alpha1.ResourceDistributionConditionFalse, LastTransitionTime: before},
	}
	got := computeStatus(rd, 4, []failure{
		{appsv1alpha1.ResourceDistributionConflictOccurred, "ns-b", errors.New("conflict b")},
		{appsv1alpha1.ResourceDistributionConflictOccurred, "ns-a", errors.New("conflict a")},
		{appsv1alpha1.ResourceDistributionDeleteResourceFailed, "gone", errors.New("delete")},
	}, now)

	if got.Desired != 4 || got.Succeeded != 2 || got.Failed != 2 || got.ObservedGeneration != 3 {
		t.Errorf("desired/succeeded/failed/observedGeneration = %d/%d/%d/%d, want 4/2/2/3: a failed deletion outside the targets does not count",
			got.Desired, got.Succeeded, got.Failed, got.ObservedGeneration)
	}
	byType := map[appsv1alpha1.ResourceDistributionConditionType]appsv1alpha1.ResourceDistributionCondition{}
	for _, c := range got.Conditions {
		byType[c.Type] = c
	}
	if len(byType) != 6 {
		t.Errorf("%d condition types, want all 6", len(byType))
	}
	want := appsv1alpha1.ResourceDistributionCondition{Type: appsv1alpha1.ResourceDistributionConflictOccurred,
		Status: appsv1alpha1.ResourceDistributionConditionTrue, LastTransitionTime: now, Reason: "conflict a", FailedNamespaces: []string{"ns-a", "ns-b"}}
	testkit.Diff(t, "a condition turning True moves its transition time and lists the namespaces in order", want, byType[appsv1alpha1.ResourceDistributionConflictOccurred])
	want = appsv1alpha1.ResourceDistributionCondition{Type: appsv1alpha1.ResourceDistributionCreateResourceFailed,
		Status: appsv1alpha1.ResourceDistributionConditionFalse, LastTransitionTime: before, Reason: "Succeeded"}
	testkit.Diff(t, "a condition staying False keeps its transition time", want, byType[appsv1alpha1.ResourceDistributionCreateResourceFailed])
}

package resourcedistribution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func rd(resource string, targets appsv1alpha1.ResourceDistributionTargets) *appsv1alpha1.ResourceDistribution {
	return &appsv1alpha1.ResourceDistribution{
		ObjectMeta: metav1.ObjectMeta{Name: "rd"},
		Spec:       appsv1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{Raw: []byte(resource)}, Targets: targets},
	}
}

func list(names ...string) appsv1alpha1.ResourceDistributionTargetNamespaces {
	out := appsv1alpha1.ResourceDistributionTargetNamespaces{}
	for _, n := range names {
		out.List = append(out.List, appsv1alpha1.ResourceDistributionNamespace{Name: n})
	}
	return out
}

const secret = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"pull"},"type":"Opaque"}`

func TestValidateResourceDistribution(t *testing.T) {
	all := appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true}
	cases := map[string]struct {
		obj, old *appsv1alpha1.ResourceDistribution
		// wantFields are the fields the errors name, in order; none means valid.
		wantFields []string
	}{
		"a Secret to all namespaces is valid": {obj: rd(secret, all)},
		"a ConfigMap is valid":                {obj: rd(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, all)},
		"a Deployment is refused naming the kind": {
			obj:        rd(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`, all),
			wantFields: []string{"spec.resource.kind"},
		},
		"a resource without a name is refused": {
			obj:        rd(`{"apiVersion":"v1","kind":"Secret","metadata":{}}`, all),
			wantFields: []string{"spec.resource.metadata.name"},
		},
		"an empty resource is refused":                {obj: rd(``, all), wantFields: []string{"spec.resource"}},
		"a resource that is not an object is refused": {obj: rd(`[1]`, all), wantFields: []string{"spec.resource"}},
		"renaming the resource is refused": {
			obj:        rd(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"other"}}`, all),
			old:        rd(secret, all),
			wantFields: []string{"spec.resource"},
		},
		"turning a Secret into a ConfigMap is refused": {
			obj:        rd(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pull"}}`, all),
			old:        rd(secret, all),
			wantFields: []string{"spec.resource"},
		},
		"changing the data of the resource is allowed": {
			obj: rd(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"pull"},"stringData":{"a":"b"}}`, all),
			old: rd(secret, all),
		},
		"an invalid included namespace name is refused naming its index": {
			obj:        rd(secret, appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("ok", "Not_Valid")}),
			wantFields: []string{"spec.targets.includedNamespaces.list[1].name"},
		},
		"an empty excluded namespace name is refused": {
			obj:        rd(secret, appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true, ExcludedNamespaces: list("")}),
			wantFields: []string{"spec.targets.excludedNamespaces.list[0].name"},
		},
		"a namespace both included and excluded is refused": {
			obj:        rd(secret, appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("a", "b"), ExcludedNamespaces: list("b")}),
			wantFields: []string{"spec.targets.excludedNamespaces"},
		},
		"an invalid label selector is refused": {
			obj: rd(secret, appsv1alpha1.ResourceDistributionTargets{NamespaceLabelSelector: metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near"}}}}),
			wantFields: []string{"spec.targets.namespaceLabelSelector"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			webhooktest.AssertFields(t, validateResourceDistribution(tc.obj, tc.old), tc.wantFields)
		})
	}
}

func TestValidateExcluded(t *testing.T) {
	excluded := sets.New("kube-system", "kube-public")
	cases := map[string]struct {
		targets    appsv1alpha1.ResourceDistributionTargets
		wantFields []string
	}{
		"a spec naming no excluded namespace passes": {targets: appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("team-a")}},
		"each excluded namespace named in includedNamespaces is refused by its index": {
			targets:    appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("kube-public", "team-a", "kube-system")},
			wantFields: []string{"spec.targets.includedNamespaces.list[0].name", "spec.targets.includedNamespaces.list[2].name"},
		},
		"allNamespaces passes: the controller leaves excluded namespaces out": {targets: appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true}},
		"an excluded namespace in excludedNamespaces passes":                  {targets: appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true, ExcludedNamespaces: list("kube-system")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			webhooktest.AssertFields(t, validateExcluded(&tc.targets, excluded), tc.wantFields)
		})
	}
}

func TestAccessNeeded(t *testing.T) {
	selector := metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	cases := map[string]struct {
		targets appsv1alpha1.ResourceDistributionTargets
		// want are "namespace@field", "" being every namespace.
		want []string
	}{
		"included namespaces need the rights in each of them": {
			targets: appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("a", "b")},
			want:    []string{"a@spec.targets.includedNamespaces.list[0].name", "b@spec.targets.includedNamespaces.list[1].name"},
		},
		"allNamespaces needs the rights cluster-wide, whatever else is listed": {
			targets: appsv1alpha1.ResourceDistributionTargets{AllNamespaces: true, IncludedNamespaces: list("a"), ExcludedNamespaces: list("b")},
			want:    []string{"@spec.targets.allNamespaces"},
		},
		"a namespace selector needs the rights cluster-wide: it picks namespaces created later": {
			targets: appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: list("a"), NamespaceLabelSelector: selector},
			want:    []string{"@spec.targets.namespaceLabelSelector"},
		},
		"no target needs nothing": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, a := range accessNeeded(&tc.targets) {
				got = append(got, a.namespace+"@"+a.path.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("places (-want +got):\n%s", diff)
			}
		})
	}
}

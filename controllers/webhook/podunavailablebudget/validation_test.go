package podunavailablebudget

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

type pubB struct {
	p policyv1alpha1.PodUnavailableBudget
}

func pub(name string) *pubB {
	one := intstr.FromInt32(1)
	return &pubB{p: policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: &one,
		},
	}}
}

func (b *pubB) selector(s *metav1.LabelSelector) *pubB { b.p.Spec.Selector = s; return b }
func (b *pubB) target(apiVersion, kind, name string) *pubB {
	b.p.Spec.TargetReference = &policyv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: name}
	return b
}
func (b *pubB) max(v *intstr.IntOrString) *pubB { b.p.Spec.MaxUnavailable = v; return b }
func (b *pubB) min(v *intstr.IntOrString) *pubB { b.p.Spec.MinAvailable = v; return b }
func (b *pubB) annotation(k, v string) *pubB {
	if b.p.Annotations == nil {
		b.p.Annotations = map[string]string{}
	}
	b.p.Annotations[k] = v
	return b
}
func (b *pubB) obj() *policyv1alpha1.PodUnavailableBudget { return b.p.DeepCopy() }

func TestValidatePub(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
	tests := map[string]struct {
		pub, old   *policyv1alpha1.PodUnavailableBudget
		others     []policyv1alpha1.PodUnavailableBudget
		wantFields []string
	}{
		"a selector and maxUnavailable budget is valid": {pub: pub("a").obj()},
		"a targetRef and minAvailable budget is valid": {
			pub: pub("a").selector(nil).target("apps.kruise.io/v1alpha1", "CloneSet", "web").max(nil).min(pct("50%")).obj(),
		},
		"neither selector nor targetRef is refused": {pub: pub("a").selector(nil).obj(), wantFields: []string{"spec.selector"}},
		"both selector and targetRef are refused": {
			pub: pub("a").target("apps/v1", "Deployment", "web").obj(), wantFields: []string{"spec.targetRef"},
		},
		"a targetRef without a kind is refused naming the field": {
			pub: pub("a").selector(nil).target("apps/v1", "", "web").obj(), wantFields: []string{"spec.targetRef.kind"},
		},
		"an empty selector is refused": {
			pub: pub("a").selector(&metav1.LabelSelector{}).obj(), wantFields: []string{"spec.selector"},
		},
		"neither maxUnavailable nor minAvailable is refused": {pub: pub("a").max(nil).obj(), wantFields: []string{"spec.maxUnavailable"}},
		"both maxUnavailable and minAvailable are refused":   {pub: pub("a").min(num(1)).obj(), wantFields: []string{"spec.minAvailable"}},
		"a percentage over 100% is refused":                  {pub: pub("a").max(pct("120%")).obj(), wantFields: []string{"spec.maxUnavailable"}},
		"a negative minAvailable is refused":                 {pub: pub("a").max(nil).min(num(-1)).obj(), wantFields: []string{"spec.minAvailable"}},
		"an unknown protect operation is refused": {
			pub:        pub("a").annotation(policyv1alpha1.PubProtectOperationAnnotation, "DELETE,REBOOT").obj(),
			wantFields: []string{"metadata.annotations[kruise.io/pub-protect-operations]"},
		},
		"RESIZE, an operation 1.8 does not know, is refused as 1.8 refuses it": {
			pub:        pub("a").annotation(policyv1alpha1.PubProtectOperationAnnotation, "DELETE,RESIZE").obj(),
			wantFields: []string{"metadata.annotations[kruise.io/pub-protect-operations]"},
		},
		"a protect-total-replicas that is not a number is refused": {
			pub:        pub("a").annotation(policyv1alpha1.PubProtectTotalReplicasAnnotation, "ten").obj(),
			wantFields: []string{"metadata.annotations[pub.kruise.io/protect-total-replicas]"},
		},
		"a changed selector is refused on update": {
			pub: pub("a").selector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}).obj(), old: pub("a").obj(),
			wantFields: []string{"spec"},
		},
		"another budget of the same target is refused": {
			pub:        pub("a").selector(nil).target("apps.kruise.io/v1alpha1", "CloneSet", "web").obj(),
			others:     []policyv1alpha1.PodUnavailableBudget{*pub("b").selector(nil).target("apps.kruise.io/v1beta1", "CloneSet", "web").obj()},
			wantFields: []string{"spec.targetRef"},
		},
		"another budget with the same selector is refused": {
			pub: pub("a").obj(), others: []policyv1alpha1.PodUnavailableBudget{*pub("b").obj()}, wantFields: []string{"spec.selector"},
		},
		"a selector In the other's value overlaps": {
			pub:        pub("a").selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}).obj(),
			others:     []policyv1alpha1.PodUnavailableBudget{*pub("b").obj()},
			wantFields: []string{"spec.selector"},
		},
		"selectors of different values do not overlap": {
			pub: pub("a").obj(), others: []policyv1alpha1.PodUnavailableBudget{*pub("b").selector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}).obj()},
		},
		"selectors of different keys do not overlap, as in 1.8": {
			pub: pub("a").obj(), others: []policyv1alpha1.PodUnavailableBudget{*pub("b").selector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}}).obj()},
		},
		"the budget itself among the others is no conflict": {pub: pub("a").obj(), old: pub("a").obj(), others: []policyv1alpha1.PodUnavailableBudget{*pub("a").obj()}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			webhooktest.AssertFields(t, validatePub(tc.pub, tc.old, tc.others), tc.wantFields)
		})
	}
}

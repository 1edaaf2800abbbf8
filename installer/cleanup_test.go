package installer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-addon/kruise-addon/uninstallgate"
)

func TestWebhooksBlockingCleanup(t *testing.T) {
	fail, ignore := admissionregistrationv1.Fail, admissionregistrationv1.Ignore
	hook := func(name string, policy *admissionregistrationv1.FailurePolicyType, group, resource string, ops ...admissionregistrationv1.OperationType) hookView {
		return hookView{name: name, policy: policy, rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1alpha1"}, Resources: []string{resource}},
		}}}
	}
	cud := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	cloneSets := uninstallgate.KindCount{Kind: "CloneSet", Resource: schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}, Count: 1}
	stsBeta := uninstallgate.KindCount{Kind: "StatefulSet", Resource: schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1beta1", Resource: "statefulsets"}, Count: 1}
	pullJobs := uninstallgate.KindCount{Kind: "ImagePullJob", Resource: schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "imagepulljobs"}, Count: 1,
		Finalizers: []string{"apps.kruise.io/deletion-protection"}}
	cases := map[string]struct {
		hooks     []hookView
		remaining []uninstallgate.KindCount
		want      []int
	}{
		"a webhook failing closed on the DELETE of a remaining kind blocks the cleanup": {
			hooks:     []hookView{hook("vcloneset.kb.io", &fail, "apps.kruise.io", "clonesets", cud...)},
			remaining: []uninstallgate.KindCount{cloneSets}, want: []int{0},
		},
		"an unset failurePolicy is Fail": {
			hooks:     []hookView{hook("vcloneset.kb.io", nil, "apps.kruise.io", "clonesets", cud...)},
			remaining: []uninstallgate.KindCount{cloneSets}, want: []int{0},
		},
		"a webhook that fails open already is left": {
			hooks:     []hookView{hook("vcloneset.kb.io", &ignore, "apps.kruise.io", "clonesets", cud...)},
			remaining: []uninstallgate.KindCount{cloneSets},
		},
		"a webhook that checks only CREATE and UPDATE is left": {
			hooks:     []hookView{hook("vsidecarset.kb.io", &fail, "apps.kruise.io", "clonesets", admissionregistrationv1.Create, admissionregistrationv1.Update)},
			remaining: []uninstallgate.KindCount{cloneSets},
		},
		"a webhook of a kind with nothing left is left": {
			hooks: []hookView{
				hook("vuniteddeployment.kb.io", &fail, "apps.kruise.io", "uniteddeployments", cud...),
				hook("vstatefulset.kb.io", &fail, "apps.kruise.io", "statefulsets", cud...),
			},
			remaining: []uninstallgate.KindCount{stsBeta}, want: []int{1},
		},
		"a deletion protection webhook of a Kubernetes kind is left": {
			hooks:     []hookView{hook("vnamespace.kb.io", &fail, "", "namespaces", admissionregistrationv1.Delete)},
			remaining: []uninstallgate.KindCount{cloneSets},
		},
		"a webhook checking the UPDATE of a kind the manager finalizes blocks letting go of its deleted objects": {
			hooks:     []hookView{hook("vimagepulljob.kb.io", &fail, "apps.kruise.io", "imagepulljobs", admissionregistrationv1.Create, admissionregistrationv1.Update)},
			remaining: []uninstallgate.KindCount{pullJobs}, want: []int{0},
		},
		"a wildcard rule covers the kind": {
			hooks:     []hookView{hook("wide", &fail, "*", "*", admissionregistrationv1.OperationAll)},
			remaining: []uninstallgate.KindCount{cloneSets}, want: []int{0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, webhooksBlockingCleanup(tc.hooks, tc.remaining)); diff != "" {
				t.Errorf("blocking webhooks (-want +got):\n%s", diff)
			}
		})
	}
}

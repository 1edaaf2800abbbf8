package persistentpodstate

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func pps(name, apiVersion, kind, target string) *appsv1alpha1.PersistentPodState {
	return &appsv1alpha1.PersistentPodState{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: target},
			RequiredPersistentTopology: &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{"topology.kubernetes.io/zone"}},
		},
	}
}

func TestValidatePersistentPodState(t *testing.T) {
	valid := pps("db", "apps.kruise.io/v1beta1", "StatefulSet", "db")
	with := func(f func(p *appsv1alpha1.PersistentPodState)) *appsv1alpha1.PersistentPodState {
		p := valid.DeepCopy()
		f(p)
		return p
	}
	runs := &workloadref.Whitelist{Workloads: []workloadref.CustomWorkload{{GroupVersionKind: schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Run"}}}}
	cases := map[string]struct {
		obj, old   *appsv1alpha1.PersistentPodState
		others     []appsv1alpha1.PersistentPodState
		custom     *workloadref.Whitelist
		wantFields []string
	}{
		"an Advanced StatefulSet target with a zone is valid": {obj: valid},
		"an apps/v1 StatefulSet target is valid":              {obj: pps("db", "apps/v1", "StatefulSet", "db")},
		"a Deployment target is refused naming targetRef": {
			obj: pps("db", "apps/v1", "Deployment", "db"), wantFields: []string{"spec.targetRef"},
		},
		"a StatefulSet-like custom workload the whitelist names is valid": {
			obj: pps("db", "example.io/v1", "Run", "db"), custom: runs,
		},
		"a custom workload the whitelist leaves out is refused naming targetRef": {
			obj: pps("db", "example.io/v1", "Other", "db"), custom: runs, wantFields: []string{"spec.targetRef"},
		},
		"a target without a name is refused": {
			obj: pps("db", "apps/v1", "StatefulSet", ""), wantFields: []string{"spec.targetRef.name"},
		},
		"a second PersistentPodState for one workload is refused, whatever the version": {
			obj:        valid,
			others:     []appsv1alpha1.PersistentPodState{*pps("first", "apps.kruise.io/v1alpha1", "StatefulSet", "db")},
			wantFields: []string{"spec.targetRef"},
		},
		"changing the target is refused": {
			obj: valid, old: pps("db", "apps.kruise.io/v1beta1", "StatefulSet", "other"), wantFields: []string{"spec.targetRef"},
		},
		"no topology at all is refused": {
			obj:        with(func(p *appsv1alpha1.PersistentPodState) { p.Spec.RequiredPersistentTopology = nil }),
			wantFields: []string{"spec.requiredPersistentTopology"},
		},
		"an empty required key list is refused": {
			obj:        with(func(p *appsv1alpha1.PersistentPodState) { p.Spec.RequiredPersistentTopology.NodeTopologyKeys = nil }),
			wantFields: []string{"spec.requiredPersistentTopology.nodeTopologyKeys"},
		},
		"a preferred weight out of 1 to 100 is refused": {
			obj: with(func(p *appsv1alpha1.PersistentPodState) {
				p.Spec.PreferredPersistentTopology = []appsv1alpha1.PreferredTopologyTerm{{Weight: 0, Preference: appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{"rack"}}}}
			}),
			wantFields: []string{"spec.preferredPersistentTopology[0].weight"},
		},
		"an invalid annotation key is refused naming its index": {
			obj: with(func(p *appsv1alpha1.PersistentPodState) {
				p.Spec.PersistentPodAnnotations = []appsv1alpha1.PersistentPodAnnotation{{Key: "ok"}, {Key: "bad key"}}
			}),
			wantFields: []string{"spec.persistentPodAnnotations[1].key"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			webhooktest.AssertFields(t, validatePersistentPodState(tc.obj, tc.old, tc.others, tc.custom), tc.wantFields)
		})
	}
}

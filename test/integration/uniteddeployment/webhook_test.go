package uniteddeployment

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// A CloneSet's selector is fixed once it exists, but inside a UnitedDeployment the
// cloneSetTemplate's selector is only a template: 1.8 lets it change, and the controller sets
// each subset CloneSet's selector itself.
func TestTheCloneSetTemplateSelectorMayChange(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.UnitedDeployment("web", ns).Replicas(2).Image(imageV1).Zones(zoneA, zoneB).Obj())
	// The controller writes the new UnitedDeployment's status meanwhile: read it again on a conflict.
	err := framework.TryChange(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "web"}, func(ud *appsv1alpha1.UnitedDeployment) {
		ud.Spec.Template.CloneSetTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}
		ud.Spec.Template.CloneSetTemplate.Spec.Template.Labels["tier"] = "front"
	})
	if err != nil {
		t.Fatalf("changing spec.template.cloneSetTemplate.spec.selector was refused: %v", err)
	}

	// A CloneSet of its own still keeps its selector.
	cs := kinds.CloneSet("plain", ns).Replicas(0).Obj()
	framework.Create(t, env.Client, cs)
	// The controller writes the new CloneSet's status meanwhile: read it again on a conflict.
	err = framework.TryChange(context.Background(), env.Client, client.ObjectKeyFromObject(cs), func(cur *appsv1alpha1.CloneSet) {
		cur.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "plain", "tier": "front"}}
		cur.Spec.Template.Labels["tier"] = "front"
	})
	framework.WantRefused(t, err, "selector")
}

func TestTheWebhookRefusesInvalidUnitedDeployments(t *testing.T) {
	ns := newNamespace(t)
	cases := map[string]struct {
		ud        *appsv1alpha1.UnitedDeployment
		wantField string
	}{
		"two subsets of one name": {
			ud: func() *appsv1alpha1.UnitedDeployment {
				u := kinds.UnitedDeployment("dup", ns).Replicas(2).Zones(zoneA, zoneA).Obj()
				return u
			}(),
			wantField: "spec.topology.subsets[1].name",
		},
		"subsets' replicas above spec.replicas": {
			ud:        kinds.UnitedDeployment("over", ns).Replicas(2).Zones(zoneA, zoneB).SubsetReplicas(zoneA, "2").SubsetReplicas(zoneB, "1").Obj(),
			wantField: "spec.topology.subsets",
		},
		"a partition of no subset": {
			ud:        kinds.UnitedDeployment("part", ns).Replicas(2).Zones(zoneA).Partition("zone-x", 1).Obj(),
			wantField: "spec.updateStrategy.manualUpdate.partitions[zone-x]",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			framework.CreateRefused(t, env.Client, c.ud, c.wantField)
		})
	}

	// A subset's placement is fixed once it exists.
	framework.Create(t, env.Client, kinds.UnitedDeployment("placed", ns).Replicas(0).Zones(zoneA).Obj())
	// The controller may write the object between the read and the update: read it again then.
	err := framework.TryChange(context.Background(), env.Client, key(ns, "placed"), func(ud *appsv1alpha1.UnitedDeployment) {
		ud.Spec.Topology.Subsets[0].NodeSelectorTerm.MatchExpressions[0].Values = []string{zoneB}
	})
	framework.WantRefused(t, err, "spec.topology.subsets[0].nodeSelectorTerm")
}

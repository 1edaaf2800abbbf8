package uniteddeployment

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// hugeSubsets are the subsets of the huge UnitedDeployments: the allocator splits 2147483647
// replicas over them.
var hugeSubsets = []string{zoneA, zoneB}

// subsetReplicas returns spec.replicas of every workload of kind in ns.
func subsetReplicas(ctx context.Context, ns string, kind schema.GroupVersionKind) ([]int64, error) {
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []int64
	for _, w := range list.Items {
		n, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
		out = append(out, n)
	}
	return out, nil
}

// runHugeUnitedDeployment runs the huge-replicas scenario on a UnitedDeployment named huge of
// framework.HugeReplicas over hugeSubsets, whose template makes workloads of kind: it creates
// its first pods with the heap bounded, and scaled to 0 (once every subset workload was told)
// at most one batch per subset follows. Every subset kind the add-on runs creates in batches
// of the same size (statefulset.CreateBatchLimit).
func runHugeUnitedDeployment(t *testing.T, ud *kinds.UnitedDeploymentBuilder, kind schema.GroupVersionKind) {
	obj := ud.Replicas(framework.HugeReplicas).Image(imageV1).Zones(hugeSubsets...).Obj()
	ns := obj.Namespace
	env.RunHugeScale(t, framework.HugeScale{
		Namespace: ns,
		What:      fmt.Sprintf("a %d-replica UnitedDeployment of %ss", framework.HugeReplicas, kind.Kind),
		AfterStop: len(hugeSubsets) * statefulset.CreateBatchLimit,
		Create:    func(t *testing.T) { framework.Create(t, env.Client, obj) },
		Stop: func(t *testing.T) {
			updateUD(t, ns, obj.Name, func(ud *appsv1alpha1.UnitedDeployment) { ud.Spec.Replicas = ptr.To[int32](0) })
			framework.Eventually(t, settle, "every subset "+kind.Kind+" is scaled to 0", func(ctx context.Context) error {
				replicas, err := subsetReplicas(ctx, ns, kind)
				if err != nil {
					return err
				}
				ok := len(replicas) == len(hugeSubsets)
				for _, n := range replicas {
					ok = ok && n == 0
				}
				return framework.Want(ok, fmt.Sprintf("subset replicas %v", replicas))
			})
		},
	})
}

// A UnitedDeployment of 2147483647 replicas with an Advanced StatefulSet template reached the
// Advanced StatefulSet's per-replica allocation; it and its subsets stay bounded now.
func TestHugeReplicasUnitedDeploymentOfAdvancedStatefulSetsKeepsTheManagersMemoryBounded(t *testing.T) {
	runHugeUnitedDeployment(t, kinds.UnitedDeployment("huge", newNamespace(t)).AdvancedStatefulSet(),
		appsv1beta1.GroupVersion.WithKind("StatefulSet"))
}

func TestHugeReplicasUnitedDeploymentOfCloneSetsKeepsTheManagersMemoryBounded(t *testing.T) {
	runHugeUnitedDeployment(t, kinds.UnitedDeployment("huge", newNamespace(t)),
		appsv1alpha1.GroupVersion.WithKind("CloneSet"))
}

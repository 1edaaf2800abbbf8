package integration

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// The Go types and the generated schemas must agree: what a controller writes through the
// typed client comes back intact, and the schema fills the defaults it promises.
func TestTypedObjectsRoundTripThroughTheSchemas(t *testing.T) {
	ctx := context.Background()
	ns := framework.NewNamespace(t, env.Client, "it-", nil)

	cs := kinds.CloneSet("typed", ns).Replicas(4).Image("nginx:1.27").
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Partition(intstr.FromString("50%")).Obj()
	sts := kinds.StatefulSet("typed", ns).Replicas(3).Image("nginx:1.27").
		ReserveOrdinals(intstr.FromInt32(1)).PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).Obj()
	ds := kinds.DaemonSet("typed", ns).Image("nginx:1.27").Obj()
	bcj := kinds.BroadcastJob("typed", ns).Image("busybox:1.36").Obj()

	for _, obj := range []client.Object{cs, sts, ds, bcj} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
	}

	gotCS := &appsv1alpha1.CloneSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), gotCS); err != nil {
		t.Fatal(err)
	}
	if *gotCS.Spec.Replicas != 4 || gotCS.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" ||
		gotCS.Spec.UpdateStrategy.Type != appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType ||
		gotCS.Spec.UpdateStrategy.Partition.String() != "50%" {
		t.Errorf("CloneSet spec changed on the way: %+v", gotCS.Spec)
	}
	if mu := gotCS.Spec.UpdateStrategy.MaxUnavailable; mu == nil || mu.String() != "20%" {
		t.Errorf("CloneSet maxUnavailable = %v, want the default 20%%", mu)
	}
	if l := gotCS.Spec.RevisionHistoryLimit; l == nil || *l != 10 {
		t.Errorf("CloneSet revisionHistoryLimit = %v, want the default 10", l)
	}

	gotSTS := &appsv1beta1.StatefulSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sts), gotSTS); err != nil {
		t.Fatal(err)
	}
	if len(gotSTS.Spec.ReserveOrdinals) != 1 || gotSTS.Spec.ReserveOrdinals[0].IntValue() != 1 ||
		gotSTS.Spec.UpdateStrategy.RollingUpdate == nil ||
		gotSTS.Spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy != appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType {
		t.Errorf("StatefulSet spec changed on the way: %+v", gotSTS.Spec)
	}
	if gotSTS.Spec.PodManagementPolicy != "OrderedReady" {
		t.Errorf("StatefulSet podManagementPolicy = %q, want the default OrderedReady", gotSTS.Spec.PodManagementPolicy)
	}

	// The same object is served as v1alpha1 too, with no conversion webhook.
	alpha := &appsv1alpha1.StatefulSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sts), alpha); err != nil {
		t.Fatalf("get the v1beta1 StatefulSet as v1alpha1: %v", err)
	}
	if alpha.Spec.Replicas == nil || *alpha.Spec.Replicas != 3 || alpha.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("v1alpha1 view = %+v, want replicas 3 and image nginx:1.27", alpha.Spec)
	}
}

// With no conversion webhook, a write through v1alpha1 must not drop fields that only newer
// clients set: an update and a scale through v1alpha1 keep reserveOrdinals and the update policy.
func TestWritesThroughV1alpha1KeepV1beta1Fields(t *testing.T) {
	ctx := context.Background()
	ns := framework.NewNamespace(t, env.Client, "it-", nil)
	sts := kinds.StatefulSet("mixed", ns).Replicas(2).
		ReserveOrdinals(intstr.FromInt32(0), intstr.FromString("3-4")).
		PodUpdatePolicy(appsv1beta1.InPlaceOnlyPodUpdateStrategyType).Obj()
	framework.Create(t, env.Client, sts)

	alpha := &appsv1alpha1.StatefulSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sts), alpha); err != nil {
		t.Fatal(err)
	}
	alpha.Labels = map[string]string{"touched": "v1alpha1"}
	if err := env.Client.Update(ctx, alpha); err != nil {
		t.Fatalf("update through v1alpha1: %v", err)
	}
	kubectl(t, "scale", "statefulsets.v1alpha1.apps.kruise.io/mixed", "-n", ns, "--replicas=5")

	got := &appsv1beta1.StatefulSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sts), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["touched"] != "v1alpha1" || *got.Spec.Replicas != 5 {
		t.Fatalf("the v1alpha1 writes did not land: labels %v, replicas %d", got.Labels, *got.Spec.Replicas)
	}
	if len(got.Spec.ReserveOrdinals) != 2 || got.Spec.ReserveOrdinals[1].String() != "3-4" {
		t.Errorf("reserveOrdinals = %v, want [0 3-4] kept", got.Spec.ReserveOrdinals)
	}
	if ru := got.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.PodUpdatePolicy != appsv1beta1.InPlaceOnlyPodUpdateStrategyType {
		t.Errorf("rollingUpdate = %+v, want podUpdatePolicy InPlaceOnly kept", ru)
	}
}

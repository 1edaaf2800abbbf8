package uniteddeployment

import (
	"context"
	"fmt"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// The scale subresource (autoscaling/v1 Scale) reads spec.replicas, status.replicas and the
// selector, and writes spec.replicas; kube-controller-manager's HPA drives it.
func TestTheScaleSubresourceAndAnHPADriveTheUnitedDeployment(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	ud := kinds.UnitedDeployment("web", ns).Replicas(2).Image(imageV1).Zones(zoneA, zoneB).Obj()
	framework.Create(t, env.Client, ud)
	waitSpread(t, ns, "web", map[string]int32{zoneA: 1, zoneB: 1})

	scale := &autoscalingv1.Scale{}
	if err := env.Client.SubResource("scale").Get(ctx, ud, scale); err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if scale.Spec.Replicas != 2 || scale.Status.Replicas != 2 || scale.Status.Selector != "app=web" {
		t.Fatalf("scale %+v, want spec 2, status 2, selector app=web", scale)
	}
	scale.Spec.Replicas = 4
	if err := env.Client.SubResource("scale").Update(ctx, ud, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	waitSpread(t, ns, "web", map[string]int32{zoneA: 2, zoneB: 2})

	// With no metrics server the HPA still holds the target at minReplicas.
	framework.Create(t, env.Client, builder.HPA("web", ns, "apps.kruise.io/v1alpha1", "UnitedDeployment", 6, 8))
	waitSpread(t, ns, "web", map[string]int32{zoneA: 3, zoneB: 3})
	framework.WaitFor(t, env.Client, key(ns, "web"), settle, "the HPA reads the UnitedDeployment's scale", func(got *autoscalingv2.HorizontalPodAutoscaler) error {
		return framework.Want(got.Status.CurrentReplicas == 6, fmt.Sprintf("HPA status %+v", got.Status))
	})
}

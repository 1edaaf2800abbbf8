package uniteddeployment

import (
	"context"
	"fmt"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
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
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "UnitedDeployment", Name: "web"},
			MinReplicas:    ptr.To[int32](6),
			MaxReplicas:    8,
		},
	}
	framework.Create(t, env.Client, hpa)
	waitSpread(t, ns, "web", map[string]int32{zoneA: 3, zoneB: 3})
	framework.Eventually(t, settle, "the HPA reads the UnitedDeployment's scale", func(ctx context.Context) error {
		got := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := env.Client.Get(ctx, key(ns, "web"), got); err != nil {
			return err
		}
		return framework.Want(got.Status.CurrentReplicas == 6, fmt.Sprintf("HPA status %+v", got.Status))
	})
}

package cloneset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestKubectlScaleAndAnHPADriveTheCloneSet(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(1).Obj())
	waitSettled(t, ns, "web", 1, settle)

	if _, stderr, err := env.Kubectl(ctx, "-n", ns, "scale", "clone/web", "--replicas=3"); err != nil {
		t.Fatalf("kubectl scale: %v: %s", err, stderr)
	}
	waitSettled(t, ns, "web", 3, settle)
	out, stderr, err := env.Kubectl(ctx, "-n", ns, "get", "clone", "web", "--no-headers")
	if err != nil {
		t.Fatalf("kubectl get: %v: %s", err, stderr)
	}
	if fields := strings.Fields(out); len(fields) < 6 || strings.Join(fields[:6], " ") != "web 3 3 3 3 3" {
		t.Fatalf("kubectl get clone: %q, want NAME DESIRED UPDATED UPDATED_READY READY TOTAL = web 3 3 3 3 3", out)
	}

	// The HPA controller of kube-controller-manager reads and writes the scale subresource; with
	// no metrics server it still enforces minReplicas.
	if err := env.StartKubeControllers(ctx, framework.WithoutKubeScheduler(), framework.WithControllers("horizontal-pod-autoscaler-controller")); err != nil {
		t.Fatalf("start kube-controller-manager: %v", err)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
			MinReplicas:    ptr.To[int32](5),
			MaxReplicas:    8,
		},
	}
	create(t, hpa)
	waitSettled(t, ns, "web", 5, settle)
	framework.Eventually(t, settle, "the HPA reads the CloneSet's scale", func(ctx context.Context) error {
		got := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := env.Client.Get(ctx, clientKey(ns, "web"), got); err != nil {
			return err
		}
		if got.Status.CurrentReplicas != 5 {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
}

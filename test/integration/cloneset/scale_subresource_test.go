package cloneset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
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
	create(t, builder.HPA("web", ns, "apps.kruise.io/v1alpha1", "CloneSet", 5, 8))
	waitSettled(t, ns, "web", 5, settle)
	framework.WaitFor(t, env.Client, clientKey(ns, "web"), settle, "the HPA reads the CloneSet's scale", func(got *autoscalingv2.HorizontalPodAutoscaler) error {
		return framework.Want(got.Status.CurrentReplicas == 5, fmt.Sprintf("status %+v", got.Status))
	})
}

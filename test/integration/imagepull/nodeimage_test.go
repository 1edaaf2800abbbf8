package imagepull

import (
	"context"
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestEveryNodeHasANodeImageWithItsLabels checks the NodeImages of the shared nodes: one per
// Node, named after it, carrying the Node's labels.
func TestEveryNodeHasANodeImageWithItsLabels(t *testing.T) {
	for _, name := range sim.NodeNames() {
		framework.Eventually(t, framework.Medium, "NodeImage "+name+" with the node's labels", func(ctx context.Context) error {
			node, ni := &corev1.Node{}, &appsv1alpha1.NodeImage{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, node); err != nil {
				return err
			}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, ni); err != nil {
				return err
			}
			return framework.Want(maps.Equal(node.Labels, ni.Labels), fmt.Sprintf("node %v, nodeimage %v", node.Labels, ni.Labels))
		})
	}
}

// TestNodeImageComesAndGoesWithItsNode adds a node, relabels it and deletes it, and checks its
// NodeImage follows each step.
func TestNodeImageComesAndGoesWithItsNode(t *testing.T) {
	ctx := context.Background()
	extra, err := framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(),
		framework.WithNodes(builder.Node("extra-0").Label("pool", "extra").Obj()))
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Stop()

	nodeImageLabel := func(want string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			ni := &appsv1alpha1.NodeImage{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: "extra-0"}, ni); err != nil {
				return err
			}
			return framework.Want(ni.Labels["pool"] == want, fmt.Sprintf("labels %v", ni.Labels))
		}
	}
	framework.Eventually(t, framework.Medium, "NodeImage extra-0 created with pool=extra", nodeImageLabel("extra"))

	framework.Change(t, env.Client, types.NamespacedName{Name: "extra-0"}, func(node *corev1.Node) {
		node.Labels["pool"] = "moved"
	})
	framework.Eventually(t, framework.Medium, "NodeImage extra-0 relabelled pool=moved", nodeImageLabel("moved"))

	if err := extra.DeleteNodes(ctx); err != nil {
		t.Fatal(err)
	}
	framework.WaitGone(t, env.Client, types.NamespacedName{Name: "extra-0"}, &appsv1alpha1.NodeImage{}, framework.Medium, "NodeImage extra-0 deleted with its node")
}

// TestTagsOfADeletedJobAreDropped checks that a job's tag leaves the NodeImage spec once the
// job is gone.
func TestTagsOfADeletedJobAreDropped(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	image := "registry.example.com/dropped:v1"
	job := pullJob(ns, "dropped", image, onNodes("node-1"), func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.CompletionPolicy.Type = appsv1alpha1.Never
	})
	framework.CreateForTest(t, env.Client, job)
	waitTagWritten(t, job, image, "node-1")
	framework.Delete(t, env.Client, job)
	framework.Eventually(t, framework.Medium, "image dropped from node-1's spec", func(ctx context.Context) error {
		ni := &appsv1alpha1.NodeImage{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "node-1"}, ni); err != nil {
			return err
		}
		_, ok := ni.Spec.Images["registry.example.com/dropped"]
		return framework.Want(!ok, fmt.Sprintf("spec images %d", len(ni.Spec.Images)))
	})
}

package testkit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestCountStatusPatches(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	n := 0
	c := CountStatusPatches(fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).Build(), &n)
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Status.Phase = corev1.PodRunning
	if err := c.Status().Patch(ctx, pod, patch); err != nil {
		t.Fatal(err)
	}
	pod.Labels = map[string]string{"a": "b"}
	if err := c.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	Diff(t, "status patches counted (a status patch, then an update that is not one)", 1, n)
}

package testclient

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

func TestNewServesTheStatusSubresourceOfPodsAndOfTheObjectsKinds(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	c := New(pod, cs)
	pod.Status.Phase, cs.Status.Replicas = corev1.PodRunning, 3
	for _, obj := range []client.Object{pod, cs} {
		if err := c.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	gotPod, gotCS := &corev1.Pod{}, &appsv1alpha1.CloneSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), gotPod); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cs), gotCS); err != nil {
		t.Fatal(err)
	}
	if gotPod.Status.Phase != "" || gotCS.Status.Replicas != 0 {
		t.Errorf("an Update wrote status (pod phase %q, CloneSet replicas %d): the status subresource is not served", gotPod.Status.Phase, gotCS.Status.Replicas)
	}
}

package sidecarset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// A pod with Ordered launch priority, with a sidecar injected in front, gets a barrier env per
// container in order, and the controller opens its <pod>-barrier ConfigMap key by key as
// containers become ready, then marks the pod completed. (That the kubelet holds a container
// until its key exists needs a real kubelet; see test/e2e.)
func TestContainerLaunchPriorityOrderedWithInjectedSidecar(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("ordered-log", ns))
	pod := webPod("web", ns)
	pod.Annotations = map[string]string{appspub.ContainerLaunchPriorityKey: appspub.ContainerLaunchOrdered}
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "tail", Image: "tail:1"})
	framework.Create(t, env.Client, pod)

	got := getPod(t, ns, "web")
	want := map[string]string{"agent": "p_0", "main": "p_-1", "tail": "p_-2"}
	for name, key := range want {
		var ref *corev1.ConfigMapKeySelector
		for _, e := range container(got, name).Env {
			if e.Name == appspub.ContainerLaunchBarrierEnvName && e.ValueFrom != nil {
				ref = e.ValueFrom.ConfigMapKeyRef
			}
		}
		if ref == nil || ref.Name != "web-barrier" || ref.Key != key {
			t.Errorf("container %s barrier %+v, want web-barrier key %s", name, ref, key)
		}
	}
	if envValue(container(got, "agent"), appsv1alpha1.SidecarEnvKey) != "true" {
		t.Error("the sidecar was not injected before the barrier step")
	}

	framework.Eventually(t, framework.Medium, "barrier opened for every priority and the pod marked completed", func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-barrier"}, cm); err != nil {
			return err
		}
		for _, key := range want {
			if _, ok := cm.Data[key]; !ok {
				return fmt.Errorf("barrier keys %v", cm.Data)
			}
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != got.UID {
			return fmt.Errorf("barrier owners %v, want the pod", cm.OwnerReferences)
		}
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(got), p); err != nil {
			return err
		}
		return framework.Want(p.Annotations[launchpriority.CompletedKey] == "true", "pod not marked completed")
	})
}

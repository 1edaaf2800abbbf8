package statefulset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestInPlaceResizeOfAnAdvancedStatefulSetKeepsThePodsInOrder: with
// InPlaceWorkloadVerticalScaling, a change of cpu and memory requests and limits resizes the
// pods in place from the highest ordinal down, each only once the kubelet has reported the one
// before resized, and no pod is recreated or restarted.
func TestInPlaceResizeOfAnAdvancedStatefulSetKeepsThePodsInOrder(t *testing.T) {
	ns := newNamespace(t)
	from, to := builder.CPUMemory("100m", "64Mi", "200m", "128Mi"), builder.CPUMemory("150m", "64Mi", "200m", "256Mi")
	withResources := func(r corev1.ResourceRequirements) func(*appsv1beta1.StatefulSet) {
		return func(s *appsv1beta1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Resources = r }
	}
	createSettled(t, newSet("ss", ns, 2, inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType), withResources(from)), "ss-0", "ss-1")
	before := framework.PodUIDs(framework.MustLivePods(t, env.Client, ns, "ss"))

	change(t, ns, "ss", withResources(to))
	for _, next := range []struct{ name, waiting string }{{"ss-1", "ss-0"}, {"ss-0", ""}} {
		framework.Eventually(t, rollout, "pod "+next.name+" resized in place", func(ctx context.Context) error {
			pods, err := listPods(ctx, ns, "ss", false)
			if err != nil {
				return err
			}
			for i := range pods {
				resized := builder.HasCPUMemory(pods[i].Spec.Containers[0], to)
				if pods[i].Name == next.waiting && resized {
					return fmt.Errorf("pod %s resized before the kubelet reported %s", next.waiting, next.name)
				}
				if pods[i].Name == next.name && !resized {
					return fmt.Errorf("pod %s not resized yet", next.name)
				}
			}
			return nil
		})
		framework.ChangeStatus(t, env.Client, client.ObjectKey{Namespace: ns, Name: next.name}, framework.ReportResources)
	}
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		if p.UID != before[p.Name] {
			t.Errorf("pod %s was recreated; a resize keeps the pod", p.Name)
		}
		if got := framework.ContainerStatus(&p, "main").RestartCount; got != 0 {
			t.Errorf("pod %s: restartCount %d, want 0", p.Name, got)
		}
	}
}

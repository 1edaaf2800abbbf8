package cloneset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// burstable and resized are requests and limits of the same QoS class.
var (
	burstable = builder.CPUMemory("100m", "64Mi", "200m", "128Mi")
	resized   = builder.CPUMemory("150m", "64Mi", "200m", "256Mi")
)

// isResized tells a pod whose main container's spec has the resized requests and limits.
func isResized(p *corev1.Pod) bool { return builder.HasCPUMemory(p.Spec.Containers[0], resized) }

// resizedPods names the pods whose main container has the resized requests and limits.
func resizedPods(pods []corev1.Pod) []string {
	var out []string
	for i := range pods {
		if isResized(&pods[i]) {
			out = append(out, pods[i].Name)
		}
	}
	return out
}

// waitResized waits until n pods of web are resized and counted updated, each still in service
// (InPlaceUpdateReady True: the resize restarts nothing), and returns their names.
func waitResized(t *testing.T, ns string, n int) []string {
	t.Helper()
	var names []string
	framework.Eventually(t, settle, fmt.Sprintf("%d pod(s) resized in place", n), func(ctx context.Context) error {
		cs := &appsv1alpha1.CloneSet{}
		if err := env.Client.Get(ctx, clientKey(ns, "web"), cs); err != nil {
			return err
		}
		pods, err := framework.LivePods(ctx, env.Client, ns, "web")
		if err != nil {
			return err
		}
		for i := range pods {
			if got := framework.PodCondition(&pods[i], appspub.InPlaceUpdateReady); isResized(&pods[i]) && got != corev1.ConditionTrue {
				return fmt.Errorf("pod %s: InPlaceUpdateReady %q, want True", pods[i].Name, got)
			}
		}
		names = resizedPods(pods)
		if len(names) != n {
			return fmt.Errorf("%d pods resized, want %d", len(names), n)
		}
		if st := cs.Status; st.ObservedGeneration != cs.Generation || st.UpdatedReplicas != int32(n) {
			return fmt.Errorf("status %+v, want %d updated", st, n)
		}
		return nil
	})
	return names
}

// TestInPlaceResizeKeepsThePodAndWaitsForTheKubelet: with InPlaceWorkloadVerticalScaling, a
// change of cpu and memory requests and limits resizes the pods in place (same UID, no restart,
// never out of service), and a pod counts as updated only once the kubelet reports the new
// resources in its container status: until then the next pod waits under maxUnavailable 1.
func TestInPlaceResizeKeepsThePodAndWaitsForTheKubelet(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).Image(imageV1).Resources(burstable).MaxUnavailable(intstr.FromInt32(1)).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 2, settle)
	ids := identities(framework.MustLivePods(t, env.Client, ns, "web"))

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Resources = resized })
	first := waitResized(t, ns, 1)
	framework.Consistently(t, framework.Medium, "the other pod waits while the kubelet has not reported the first resize", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "web")
		if err != nil {
			return err
		}
		return framework.Want(len(resizedPods(pods)) == 1, "only one pod is resized")
	})
	framework.ChangeStatus(t, env.Client, clientKey(ns, first[0]), framework.ReportResources)
	for _, name := range waitResized(t, ns, 2) {
		if name != first[0] {
			framework.ChangeStatus(t, env.Client, clientKey(ns, name), framework.ReportResources)
		}
	}
	cs := waitSettled(t, ns, "web", 2, settle)

	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		if id, ok := ids[p.Name]; !ok || id.uid != p.UID {
			t.Errorf("pod %s is new; a resize must keep the pod", p.Name)
			continue
		}
		if !isResized(&p) {
			t.Errorf("pod %s: resources %+v, want the resized ones", p.Name, p.Spec.Containers[0].Resources)
		}
		if got := framework.ContainerStatus(&p, "main").RestartCount; got != 0 {
			t.Errorf("pod %s: restartCount %d, want 0", p.Name, got)
		}
		if p.Labels["controller-revision-hash"] != cs.Status.UpdateRevision {
			t.Errorf("pod %s: revision %q, want %q", p.Name, p.Labels["controller-revision-hash"], cs.Status.UpdateRevision)
		}
	}
}

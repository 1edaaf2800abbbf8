//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// resizeApp is the CloneSet whose containers the InPlaceWorkloadVerticalScaling step resizes.
const resizeApp = "resize-e2e"

// resizeContainer is container main of image with cpu and memory requests and limits, neither
// of which restarts the container when resized (resizePolicy NotRequired).
func resizeContainer(image, cpuRequest, cpuLimit, memoryRequest, memoryLimit string) string {
	return mainContainer(image,
		"resources:",
		fmt.Sprintf("  requests: {cpu: %s, memory: %s}", cpuRequest, memoryRequest),
		fmt.Sprintf("  limits: {cpu: %s, memory: %s}", cpuLimit, memoryLimit),
		"resizePolicy:",
		"- {resourceName: cpu, restartPolicy: NotRequired}",
		"- {resourceName: memory, restartPolicy: NotRequired}")
}

// resizeManifest is a CloneSet of 2 pods of resizeApp with the InPlaceUpdateReady readiness gate,
// updated in place one pod at a time, running the given resources.
func resizeManifest(image, cpuRequest, cpuLimit, memoryRequest, memoryLimit string) string {
	return podWorkload{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", name: resizeApp, replicas: 2, grace: 1,
		inPlaceReadyGate: true, containers: resizeContainer(image, cpuRequest, cpuLimit, memoryRequest, memoryLimit),
		spec: inPlaceCloneSet("1")}.String()
}

// reportsResources says why the kubelet does not report, in the pod's container status, the cpu
// and memory requests and limits of want; nil when it does.
func reportsResources(p *corev1.Pod, want corev1.ResourceRequirements) error {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].Resources == nil {
		return fmt.Errorf("pod %s reports no container resources", p.Name)
	}
	if got := p.Status.ContainerStatuses[0].Resources; !builder.HasCPUMemory(corev1.Container{Resources: *got}, want) {
		return fmt.Errorf("pod %s reports requests %v limits %v (resize conditions %v)", p.Name, got.Requests, got.Limits, resizeConditions(p))
	}
	return nil
}

// resizeConditions are the pod's PodResizePending and PodResizeInProgress conditions, which say
// why the kubelet has not finished a resize.
func resizeConditions(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
			out = append(out, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return out
}

// testVerticalScaling: with InPlaceWorkloadVerticalScaling, a CloneSet whose cpu and memory
// requests and limits change is updated in place through the real kubelet: every pod keeps its
// UID, its container is not restarted (resizePolicy NotRequired) and the kubelet reports the new
// resources in status.containerStatuses[].resources; the CloneSet then reads all updated and
// ready.
func testVerticalScaling(t *testing.T, cl *cluster) {
	image := cl.registry + "/e2e/sample:v1"
	cl.apply(t, resizeManifest(image, "50m", "100m", "32Mi", "64Mi"), []string{"clone", resizeApp, "-n", ns})
	settledAt := func(ctx context.Context) error {
		cs, err := cl.namedCloneSet(ctx, resizeApp)
		if err != nil {
			return err
		}
		s := cs.Status
		return framework.Want(rollout{cs.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.UpdatedReadyReplicas, s.ReadyReplicas}.done(2))
	}
	framework.Eventually(t, rolloutTimeout, "the CloneSet's 2 pods Ready", settledAt)
	before := cl.podStates(t, resizeApp)

	cl.apply(t, resizeManifest(image, "80m", "150m", "48Mi", "96Mi"))
	want := builder.CPUMemory("80m", "48Mi", "150m", "96Mi")
	framework.Eventually(t, rolloutTimeout, "every pod resized in place and reported by the kubelet", func(ctx context.Context) error {
		if err := settledAt(ctx); err != nil {
			return err
		}
		pods, err := cl.livePods(ctx, resizeApp)
		if err != nil {
			return err
		}
		if len(pods) != 2 {
			return fmt.Errorf("%d live pods", len(pods))
		}
		for _, p := range pods {
			if err := reportsResources(p, want); err != nil {
				return err
			}
			if !podReady(p) {
				return fmt.Errorf("pod %s not Ready", p.Name)
			}
		}
		return nil
	})
	after := cl.podStates(t, resizeApp)
	requireKept(t, before, after, 0)
	t.Logf("resized in place: %d pods kept their UIDs, restartCount 0, the kubelet reports requests 80m/48Mi and limits 150m/96Mi", len(after))
}

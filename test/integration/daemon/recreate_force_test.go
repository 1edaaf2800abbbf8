package daemon

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestCRRByForceStopsAContainerThatStartedAfterTheRequest: with strategy.forceRecreate, as in
// 1.8, a running container the request has not stopped yet is stopped even when it is not the
// one the request recorded (the kubelet restarted it since), and a container that was already
// down counts as stopped, so its next start is not stopped a second time.
func TestCRRByForceStopsAContainerThatStartedAfterTheRequest(t *testing.T) {
	ctx := context.Background()
	const ns = "crr-force"
	if err := env.Client.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "force-0"},
		Spec: corev1.PodSpec{NodeName: realNode, Containers: []corev1.Container{
			{Name: "app", Image: images.sleeper}, {Name: "web", Image: images.sleeper},
		}},
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	kl := newFakeKubelet(t, pod)
	kl.start("app")
	kl.start("web")
	// web has exited on its own; the kubelet will start it again.
	if _, err := crt.Containers.StopContainer(ctx, &criv1.StopContainerRequest{ContainerId: kl.ids["web"]}); err != nil {
		t.Fatal(err)
	}
	runningApp := kl.ids["app"]

	crr := crrOn(pod, "force", appsv1alpha1.ContainerRecreateRequestSpec{
		Containers: []appsv1alpha1.ContainerRecreateRequestContainer{
			// The request recorded an earlier app container: the one running started after it.
			{Name: "app", StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://an-earlier-app"}},
			{Name: "web", StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + kl.ids["web"]}},
		},
		Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: true},
	})
	if err := env.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, recreateTimeout, "the running app is stopped and both containers are recorded killed", func(ctx context.Context) error {
		if st, _, err := containerState(ctx, runningApp); err != nil || st != criv1.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("app state %v, %v", st, err)
		}
		_, err := statesAre(ctx, crr, appsv1alpha1.ContainerRecreateRequestRecreating)
		return err
	})

	kl.start("app")
	kl.start("web")
	syncStatuses(t, kl, ns, crr.Name)
	framework.Eventually(t, recreateTimeout, "the request completes with both Succeeded", func(ctx context.Context) error {
		got, err := statesAre(ctx, crr, appsv1alpha1.ContainerRecreateRequestSucceeded)
		if err != nil {
			return err
		}
		return framework.Want(got.Status.Phase == appsv1alpha1.ContainerRecreateRequestCompleted, fmt.Sprintf("phase %q", got.Status.Phase))
	})
	for _, name := range []string{"app", "web"} {
		if st, _, err := containerState(ctx, kl.ids[name]); err != nil || st != criv1.ContainerState_CONTAINER_RUNNING {
			t.Errorf("%s's new container is %v (%v), want it running: a forced request stops a container once", name, st, err)
		}
	}
}

// statesAre reads crr and checks that each of its containers is in phase and recorded killed.
func statesAre(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, phase appsv1alpha1.ContainerRecreateRequestPhase) (*appsv1alpha1.ContainerRecreateRequest, error) {
	got, err := getCRR(ctx, crr.Namespace, crr.Name)
	if err != nil {
		return nil, err
	}
	var want []appsv1alpha1.ContainerRecreateRequestContainerRecreateState
	for _, c := range crr.Spec.Containers {
		want = append(want, appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: c.Name, Phase: phase, IsKilled: true})
	}
	if diff := cmp.Diff(want, got.Status.ContainerRecreateStates); diff != "" {
		return nil, fmt.Errorf("states (-want +got):\n%s", diff)
	}
	return got, nil
}

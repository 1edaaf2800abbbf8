package nodeops

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// stopContainer plays the runtime stopping a container for the daemon: the pod's status
// shows it terminated, and the simulated kubelet starts it again.
func stopContainer(t *testing.T, ns, pod, name string) {
	t.Helper()
	framework.ChangeStatus(t, env.Client, client.ObjectKey{Namespace: ns, Name: pod}, func(p *corev1.Pod) {
		st := framework.ContainerStatus(p, name)
		st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "Killed", StartedAt: st.State.Running.StartedAt, FinishedAt: metav1.Now(), ContainerID: st.ContainerID,
		}}
		st.Ready = false
	})
}

func TestCRRMinStartedSecondsWaitsForTheRecreatedContainer(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "crr-", nil)
	before := framework.ContainerStatus(runningPodWithGate(t, ns, "web-0"), "main")
	framework.Create(t, env.Client, newCRR(ns, "warmup", "web-0", &appsv1alpha1.ContainerRecreateRequestStrategy{MinStartedSeconds: 2}))

	daemonWrites(t, ns, "warmup", appsv1alpha1.ContainerRecreateRequestRecreating,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestRecreating, IsKilled: true})
	stopContainer(t, ns, "web-0", "main")

	var restarted *corev1.ContainerStatus
	framework.Eventually(t, framework.Medium, "the kubelet runs the container again and the request mirrors it", func(ctx context.Context) error {
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-0"}, p); err != nil {
			return err
		}
		restarted = framework.ContainerStatus(p, "main")
		if restarted.State.Running == nil || restarted.RestartCount != before.RestartCount+1 {
			return fmt.Errorf("container %+v", restarted.State)
		}
		crr, err := getCRR(ctx, ns, "warmup")
		if err != nil {
			return err
		}
		var synced []appsv1alpha1.ContainerRecreateRequestSyncContainerStatus
		if err := json.Unmarshal([]byte(crr.Annotations[appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey]), &synced); err != nil {
			return fmt.Errorf("sync-container-statuses: %w", err)
		}
		want := []appsv1alpha1.ContainerRecreateRequestSyncContainerStatus{{
			Name: "main", Ready: restarted.Ready, RestartCount: restarted.RestartCount, ContainerID: restarted.ContainerID,
		}}
		if diff := cmp.Diff(want, synced); diff != "" {
			return fmt.Errorf("sync-container-statuses (-want +got):\n%s", diff)
		}
		return nil
	})

	daemonWrites(t, ns, "warmup", appsv1alpha1.ContainerRecreateRequestRecreating,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestSucceeded, IsKilled: true})
	crr := waitCompleted(t, ns, "warmup")
	// Both times are recorded to the second, and the controller compares the same recorded
	// start time, so completion is at least minStartedSeconds after it.
	if ran := crr.Status.CompletionTime.Sub(restarted.State.Running.StartedAt.Time); ran < 2*time.Second {
		t.Errorf("completed %s after the recreated container started, want at least minStartedSeconds (2s)", ran)
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestEnvFromMetadataRestartOnContainerd changes, as the manager's in-place update does, a label
// that a container reads through env: the daemon stops that container on the real containerd
// once, the kubelet (played by the test) starts it again with the new value, and
// runtime-containers-meta then shows the new container ID with the hash the new label gives,
// which is what the manager waits for. A container that reads no label keeps running.
func TestEnvFromMetadataRestartOnContainerd(t *testing.T) {
	ctx := context.Background()
	const ns = "envmeta-real"
	framework.Create(t, env.Client, builder.Namespace(ns).Obj())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0", Labels: map[string]string{"track": "stable"}},
		Spec: corev1.PodSpec{
			NodeName:                      realNode,
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			ReadinessGates:                []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}},
			Containers: []corev1.Container{
				{Name: "app", Image: images.sleeper, Env: []corev1.EnvVar{
					{Name: "SLEEPER_SHOW", Value: "TRACK"},
					{Name: "TRACK", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['track']"}}},
				}},
				{Name: "side", Image: images.sleeper},
			},
		},
	}
	kl := runOnRealNode(t, pod, "app", "side")
	oldApp, side := kl.ids["app"], kl.ids["side"]
	setInPlaceReady(t, pod, corev1.ConditionTrue)

	framework.Eventually(t, recreateTimeout, "runtime-containers-meta records the env hash of the running containers", func(ctx context.Context) error {
		return checkEnvMeta(ctx, pod, map[string]string{"app": oldApp, "side": side}, map[string]int32{})
	})

	// What the manager's in-place update writes: InPlaceUpdateReady False, then the new label
	// with the in-place update state asking for env from metadata.
	setInPlaceReady(t, pod, corev1.ConditionFalse)
	state, err := json.Marshal(appspub.InPlaceUpdateState{Revision: "web-2", UpdateTimestamp: metav1.Now(),
		LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}, UpdateEnvFromMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	updatePod(t, pod, func(p *corev1.Pod) {
		p.Labels["track"] = "canary"
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[appspub.InPlaceUpdateStateKey] = string(state)
	})

	framework.Eventually(t, recreateTimeout, "the daemon stops the container that reads the changed label", func(ctx context.Context) error {
		if st, _, err := containerState(ctx, oldApp); err != nil || st != criv1.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("app state %v, %v", st, err)
		}
		return nil
	})
	if st, _, err := containerState(ctx, side); err != nil || st != criv1.ContainerState_CONTAINER_RUNNING {
		t.Errorf("side, which reads no label, is %v (%v); want it left running", st, err)
	}

	kl.start("app") // the kubelet restarts the stopped container, with the env it resolves now
	newApp := kl.ids["app"]
	framework.Eventually(t, recreateTimeout, "runtime-containers-meta shows the new container with the new label's hash", func(ctx context.Context) error {
		return checkEnvMeta(ctx, pod, map[string]string{"app": newApp, "side": side}, map[string]int32{"app": 1})
	})

	if st, _, err := containerState(ctx, newApp); err != nil || st != criv1.ContainerState_CONTAINER_RUNNING {
		t.Errorf("the restarted app is %v (%v); want it running: its env is current", st, err)
	}
	if st, _, err := containerState(ctx, side); err != nil || st != criv1.ContainerState_CONTAINER_RUNNING {
		t.Errorf("side is %v (%v); want it never restarted", st, err)
	}
	apps, err := crt.Containers.ListContainers(ctx, &criv1.ListContainersRequest{Filter: &criv1.ContainerFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: string(pod.UID), cri.LabelContainerName: "app"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(apps.GetContainers()); n != 2 {
		t.Errorf("the runtime holds %d app containers, want 2: the first and one restart", n)
	}
	logDir := filepath.Join(ctrd.base, "pods", string(pod.UID))
	for file, want := range map[string]string{"app_0.log": "TRACK=stable", "app_1.log": "TRACK=canary"} {
		framework.Eventually(t, recreateTimeout, file+" shows "+want, func(context.Context) error {
			b, err := os.ReadFile(filepath.Join(logDir, file))
			if err != nil {
				return err
			}
			if !strings.Contains(string(b), want) {
				return fmt.Errorf("log %q lacks %q", b, want)
			}
			return nil
		})
	}
}

// checkEnvMeta compares the pod's runtime-containers-meta with the expected bare IDs and restart
// counts, and each container's env hash with the one the pod's current metadata gives.
func checkEnvMeta(ctx context.Context, pod *corev1.Pod, ids map[string]string, restarts map[string]int32) error {
	got := &corev1.Pod{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, got); err != nil {
		return err
	}
	var set appspub.RuntimeContainerMetaSet
	if err := json.Unmarshal([]byte(got.Annotations[appspub.RuntimeContainerMetaKey]), &set); err != nil {
		return fmt.Errorf("annotation: %w", err)
	}
	if len(set.Containers) != len(got.Spec.Containers) {
		return fmt.Errorf("containers meta lists %d containers, want %d", len(set.Containers), len(got.Spec.Containers))
	}
	for i, c := range got.Spec.Containers {
		m := set.Containers[i]
		if m.Name != c.Name || m.ContainerID != "containerd://"+ids[c.Name] || m.RestartCount != restarts[c.Name] {
			return fmt.Errorf("container %s: meta %+v, want ID %s restart %d", c.Name, m, ids[c.Name], restarts[c.Name])
		}
		if want := envhash.Expected(&c, got); m.Hashes.ExtractedEnvFromMetadataHash != want {
			return fmt.Errorf("container %s: env hash %d, want %d (from labels %v)", c.Name, m.Hashes.ExtractedEnvFromMetadataHash, want, got.Labels)
		}
	}
	return nil
}

// setInPlaceReady sets the pod's InPlaceUpdateReady condition, as the manager does around an
// in-place update.
func setInPlaceReady(t *testing.T, pod *corev1.Pod, status corev1.ConditionStatus) {
	t.Helper()
	framework.SetPodCondition(t, env.Client, client.ObjectKeyFromObject(pod), appspub.InPlaceUpdateReady, status)
}

// updatePod changes the pod as the manager would, retrying on conflicts with the daemon's writes.
func updatePod(t *testing.T, pod *corev1.Pod, edit func(*corev1.Pod)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKeyFromObject(pod), edit)
}

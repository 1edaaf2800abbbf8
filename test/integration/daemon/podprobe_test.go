package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// probeTimeout bounds each wait for the daemon's probe results (period 1s, initial delay 1s).
const probeTimeout = framework.Medium

// probeState reads the state the daemon reported for probe of pod in its node's NodePodProbe.
func probeState(ctx context.Context, pod *corev1.Pod, probe string) (appsv1alpha1.ContainerProbeState, error) {
	npp := &appsv1alpha1.NodePodProbe{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: realNode}, npp); err != nil {
		return appsv1alpha1.ContainerProbeState{}, err
	}
	for _, ps := range npp.Status.PodProbeStatuses {
		if ps.UID != string(pod.UID) {
			continue
		}
		for _, st := range ps.ProbeStates {
			if st.Name == probe {
				return st, nil
			}
		}
	}
	return appsv1alpha1.ContainerProbeState{}, fmt.Errorf("no state for %s yet (status %+v)", probe, npp.Status)
}

func waitProbe(t *testing.T, pod *corev1.Pod, probe string, want appsv1alpha1.ProbeState) appsv1alpha1.ContainerProbeState {
	t.Helper()
	var got appsv1alpha1.ContainerProbeState
	framework.Eventually(t, probeTimeout, fmt.Sprintf("probe %s is %s", probe, want), func(ctx context.Context) error {
		var err error
		if got, err = probeState(ctx, pod, probe); err != nil {
			return err
		}
		return framework.Want(got.State == want, fmt.Sprintf("state %s (%q)", got.State, got.Message))
	})
	return got
}

// TestPodProbesOnContainerd plays the manager (it writes the node's NodePodProbe) and the
// kubelet (it runs the pod's container on the real containerd, with host network, so the pod
// IP is 127.0.0.1), and watches the daemon's results: an exec probe in the container that
// succeeds while a file exists and fails once it is gone, and TCP and HTTP probes against a
// listener of the test that succeed while it serves and fail once it is closed.
func TestPodProbesOnContainerd(t *testing.T) {
	const ns = "probe-real"
	framework.Create(t, env.Client, builder.Namespace(ns).Obj())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "game-0"},
		Spec:       corev1.PodSpec{NodeName: realNode, Containers: []corev1.Container{{Name: "main", Image: images.sleeper}}},
	}
	kl := runOnRealNode(t, pod)
	marker := filepath.Join(kl.share, "healthy")
	if err := os.WriteFile(marker, []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	kl.start("main")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(p)

	probe := func(name string, h corev1.ProbeHandler) appsv1alpha1.ContainerProbe {
		return appsv1alpha1.ContainerProbe{Name: "marker#" + name, ContainerName: "main",
			Probe: appsv1alpha1.ContainerProbeSpec{Probe: corev1.Probe{ProbeHandler: h, PeriodSeconds: 1, TimeoutSeconds: 2}}}
	}
	npp := &appsv1alpha1.NodePodProbe{
		ObjectMeta: metav1.ObjectMeta{Name: realNode},
		Spec: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{
			Name: pod.Name, Namespace: ns, UID: string(pod.UID), IP: "127.0.0.1",
			Probes: []appsv1alpha1.ContainerProbe{
				probe("exec", corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/sleeper", "exists", "/share/healthy"}}}),
				probe("tcp", corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(port)}}),
				probe("http", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt(port), Path: "/healthz"}}),
			},
		}}},
	}
	framework.Create(t, env.Client, npp)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), npp) })

	for _, name := range []string{"marker#exec", "marker#tcp", "marker#http"} {
		waitProbe(t, pod, name, appsv1alpha1.ProbeSucceeded)
	}

	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	st := waitProbe(t, pod, "marker#exec", appsv1alpha1.ProbeFailed)
	if st.Message == "" {
		t.Errorf("the failed exec probe carries no message; want the command's output")
	}

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, pod, "marker#tcp", appsv1alpha1.ProbeFailed)
	waitProbe(t, pod, "marker#http", appsv1alpha1.ProbeFailed)
}

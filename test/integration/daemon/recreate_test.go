package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// recreateTimeout bounds each step of the daemon's part of a recreate.
const recreateTimeout = framework.Long

// fakeKubelet plays the kubelet for one pod on the real containerd: one sandbox, and
// containers it (re)creates on demand with the kubelet's labels.
type fakeKubelet struct {
	t         *testing.T
	pod       *corev1.Pod
	sandboxID string
	sandbox   *criv1.PodSandboxConfig
	share     string
	ids       map[string]string // container name -> current bare ID
	attempts  map[string]uint32
}

// runOnRealNode creates pod and the fake kubelet of it, which starts the named containers on the
// real containerd.
func runOnRealNode(t *testing.T, pod *corev1.Pod, start ...string) *fakeKubelet {
	t.Helper()
	framework.Create(t, env.Client, pod)
	kl := newFakeKubelet(t, pod)
	for _, name := range start {
		kl.start(name)
	}
	return kl
}

func newFakeKubelet(t *testing.T, pod *corev1.Pod) *fakeKubelet {
	t.Helper()
	ctx := context.Background()
	if _, err := crt.Images.PullImage(ctx, &criv1.PullImageRequest{Image: &criv1.ImageSpec{Image: images.sleeper}}); err != nil {
		t.Fatalf("pull %s: %v", images.sleeper, err)
	}
	uid := string(pod.UID)
	k := &fakeKubelet{t: t, pod: pod, ids: map[string]string{}, attempts: map[string]uint32{}, share: filepath.Join(ctrd.base, "share-"+pod.Name)}
	if err := os.MkdirAll(k.share, 0o755); err != nil {
		t.Fatal(err)
	}
	k.sandbox = &criv1.PodSandboxConfig{
		Metadata:     &criv1.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: uid},
		Labels:       map[string]string{cri.LabelPodUID: uid, cri.LabelPodName: pod.Name, cri.LabelPodNamespace: pod.Namespace},
		LogDirectory: filepath.Join(ctrd.base, "pods", uid),
		// Host network, and so no hostname: containerd refuses to set one in the host's UTS namespace.
		Linux: &criv1.LinuxPodSandboxConfig{SecurityContext: &criv1.LinuxSandboxSecurityContext{
			NamespaceOptions: &criv1.NamespaceOption{Network: criv1.NamespaceMode_NODE},
		}},
	}
	resp, err := crt.Containers.RunPodSandbox(ctx, &criv1.RunPodSandboxRequest{Config: k.sandbox})
	if err != nil {
		t.Fatalf("run sandbox: %v", err)
	}
	k.sandboxID = resp.GetPodSandboxId()
	t.Cleanup(func() {
		_, _ = crt.Containers.StopPodSandbox(context.Background(), &criv1.StopPodSandboxRequest{PodSandboxId: k.sandboxID})
		_, _ = crt.Containers.RemovePodSandbox(context.Background(), &criv1.RemovePodSandboxRequest{PodSandboxId: k.sandboxID})
	})
	return k
}

// start creates and starts the next attempt of the named container.
func (k *fakeKubelet) start(name string) {
	k.t.Helper()
	ctx := context.Background()
	attempt := uint32(0)
	if _, ok := k.ids[name]; ok {
		attempt = k.attempts[name] + 1
	}
	uid := string(k.pod.UID)
	cfg := &criv1.ContainerConfig{
		Metadata: &criv1.ContainerMetadata{Name: name, Attempt: attempt},
		Envs:     k.env(name),
		Image:    &criv1.ImageSpec{Image: images.sleeper},
		Labels: map[string]string{cri.LabelContainerName: name, cri.LabelPodUID: uid,
			cri.LabelPodName: k.pod.Name, cri.LabelPodNamespace: k.pod.Namespace},
		Annotations: map[string]string{cri.AnnotationRestartCnt: strconv.Itoa(int(attempt)), cri.AnnotationHash: "2a"},
		LogPath:     fmt.Sprintf("%s_%d.log", name, attempt),
		Mounts:      []*criv1.Mount{{ContainerPath: "/share", HostPath: k.share}},
	}
	c, err := crt.Containers.CreateContainer(ctx, &criv1.CreateContainerRequest{PodSandboxId: k.sandboxID, Config: cfg, SandboxConfig: k.sandbox})
	if err != nil {
		k.t.Fatalf("create container %s: %v", name, err)
	}
	if _, err := crt.Containers.StartContainer(ctx, &criv1.StartContainerRequest{ContainerId: c.GetContainerId()}); err != nil {
		k.t.Fatalf("start container %s: %v", name, err)
	}
	k.ids[name], k.attempts[name] = c.GetContainerId(), attempt
	k.reportStatus()
}

// env resolves the named container's env as the kubelet does when it starts the container:
// literal values, and labels and annotations from the pod as the apiserver has it now.
func (k *fakeKubelet) env(name string) []*criv1.KeyValue {
	k.t.Helper()
	pod := &corev1.Pod{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(k.pod), pod); err != nil {
		k.t.Fatalf("read pod for env: %v", err)
	}
	var out []*criv1.KeyValue
	for _, c := range pod.Spec.Containers {
		if c.Name != name {
			continue
		}
		for _, e := range c.Env {
			v := e.Value
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				path := e.ValueFrom.FieldRef.FieldPath
				for prefix, m := range map[string]map[string]string{"metadata.labels['": pod.Labels, "metadata.annotations['": pod.Annotations} {
					if strings.HasPrefix(path, prefix) && strings.HasSuffix(path, "']") {
						v = m[strings.TrimSuffix(strings.TrimPrefix(path, prefix), "']")]
					}
				}
			}
			out = append(out, &criv1.KeyValue{Key: e.Name, Value: []byte(v)})
		}
	}
	return out
}

// reportStatus writes the pod status the kubelet would: running, ready, with container IDs.
func (k *fakeKubelet) reportStatus() {
	k.t.Helper()
	framework.ChangeStatus(k.t, env.Client, client.ObjectKeyFromObject(k.pod), func(pod *corev1.Pod) {
		pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, "127.0.0.1"
		pod.Status.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			id, ok := k.ids[c.Name]
			if !ok {
				continue
			}
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ContainerID: "containerd://" + id, Ready: true, Started: ptr.To(true),
				RestartCount: int32(k.attempts[c.Name]),
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
			})
		}
	})
}

// state is the runtime's state of the container with the given bare ID.
func containerState(ctx context.Context, id string) (criv1.ContainerState, time.Time, error) {
	st, err := crt.Containers.ContainerStatus(ctx, &criv1.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return 0, time.Time{}, err
	}
	return st.GetStatus().GetState(), time.Unix(0, st.GetStatus().GetStartedAt()), nil
}

func getCRR(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (*appsv1alpha1.ContainerRecreateRequest, error) {
	got := &appsv1alpha1.ContainerRecreateRequest{}
	return got, env.Client.Get(ctx, client.ObjectKeyFromObject(crr), got)
}

func TestContainerRecreateOnContainerd(t *testing.T) {
	ctx := context.Background()
	const ns = "crr-real"
	framework.Create(t, env.Client, builder.Namespace(ns).Obj())
	var hookHits atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/prestop" {
			hookHits.Add(1)
		}
	}))
	defer hook.Close()
	hookURL, _ := url.Parse(hook.URL)
	hookPort, _ := strconv.Atoi(hookURL.Port())

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0"},
		Spec: corev1.PodSpec{NodeName: realNode, Containers: []corev1.Container{
			{Name: "app", Image: images.sleeper}, {Name: "web", Image: images.sleeper},
		}},
	}
	kl := runOnRealNode(t, pod, "app", "web")
	oldApp, oldWeb := kl.ids["app"], kl.ids["web"]

	framework.Eventually(t, recreateTimeout, "runtime-containers-meta lists both containers", func(ctx context.Context) error {
		return checkMeta(ctx, pod, map[string]string{"app": oldApp, "web": oldWeb}, 0)
	})

	waitForNextSecond(t, oldWeb)
	crr := crrOn(pod, "restart-both", appsv1alpha1.ContainerRecreateRequestSpec{
		Containers: []appsv1alpha1.ContainerRecreateRequestContainer{
			{Name: "app", PreStop: &appsv1alpha1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/sleeper", "touch", "/share/app-prestop"}}},
				StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + oldApp}},
			{Name: "web", PreStop: &appsv1alpha1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/prestop", Port: intstr.FromString("http")}},
				Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: int32(hookPort)}},
				StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + oldWeb}},
		},
		Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{OrderedRecreate: true, TerminationGracePeriodSeconds: ptr.To[int64](5)},
	})
	framework.Create(t, env.Client, crr)

	framework.Eventually(t, recreateTimeout, "app is stopped first, after its exec preStop hook, and recorded", func(ctx context.Context) error {
		if st, _, err := containerState(ctx, oldApp); err != nil || st != criv1.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("app state %v, %v", st, err)
		}
		got, err := getCRR(ctx, crr)
		if err != nil {
			return err
		}
		want := []appsv1alpha1.ContainerRecreateRequestContainerRecreateState{
			{Name: "app", Phase: appsv1alpha1.ContainerRecreateRequestRecreating, IsKilled: true},
			{Name: "web", Phase: appsv1alpha1.ContainerRecreateRequestPending},
		}
		if got.Status.Phase != appsv1alpha1.ContainerRecreateRequestRecreating {
			return fmt.Errorf("crr phase %q", got.Status.Phase)
		}
		if diff := cmp.Diff(want, got.Status.ContainerRecreateStates); diff != "" {
			return fmt.Errorf("states (-want +got):\n%s", diff)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(kl.share, "app-prestop")); err != nil {
		t.Errorf("the exec preStop hook of app left no file: %v", err)
	}
	if st, _, err := containerState(ctx, oldWeb); err != nil || st != criv1.ContainerState_CONTAINER_RUNNING {
		t.Errorf("web is %v (%v) while app is not recreated yet; orderedRecreate wants it running", st, err)
	}

	kl.start("app") // the kubelet restarts the stopped container
	syncStatuses(t, kl, crr)
	framework.Eventually(t, recreateTimeout, "web is stopped once app runs again, after its HTTP preStop hook", func(ctx context.Context) error {
		if st, _, err := containerState(ctx, oldWeb); err != nil || st != criv1.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("web state %v, %v", st, err)
		}
		return nil
	})
	if n := hookHits.Load(); n != 1 {
		t.Errorf("the HTTP preStop hook was called %d times, want 1", n)
	}
	kl.start("web")

	syncUntilRecreated(t, kl, crr, "the CRR is completed with both containers Succeeded", func(got *appsv1alpha1.ContainerRecreateRequest) error {
		if got.Status.Phase != appsv1alpha1.ContainerRecreateRequestCompleted || got.Status.CompletionTime == nil {
			return fmt.Errorf("phase %q completion %v", got.Status.Phase, got.Status.CompletionTime)
		}
		return nil
	})
	framework.Eventually(t, recreateTimeout, "runtime-containers-meta follows the new containers", func(ctx context.Context) error {
		return checkMeta(ctx, pod, map[string]string{"app": kl.ids["app"], "web": kl.ids["web"]}, 1)
	})
}

// syncStatuses plays the manager, which copies the pod's container statuses onto the CRR: the
// daemon counts a recreated container as Succeeded only once the pod reports it ready.
func syncStatuses(t *testing.T, kl *fakeKubelet, crr *appsv1alpha1.ContainerRecreateRequest) {
	t.Helper()
	var list []appsv1alpha1.ContainerRecreateRequestSyncContainerStatus
	for _, c := range kl.pod.Spec.Containers {
		list = append(list, appsv1alpha1.ContainerRecreateRequestSyncContainerStatus{
			Name: c.Name, Ready: true, RestartCount: int32(kl.attempts[c.Name]), ContainerID: "containerd://" + kl.ids[c.Name]})
	}
	raw, _ := json.Marshal(list)
	framework.Change(t, env.Client, client.ObjectKeyFromObject(crr), func(got *appsv1alpha1.ContainerRecreateRequest) {
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		got.Annotations[appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey] = string(raw)
	})
}

// checkMeta compares the pod's runtime-containers-meta with the expected bare IDs and restarts.
func checkMeta(ctx context.Context, pod *corev1.Pod, ids map[string]string, restarts int32) error {
	got := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		return err
	}
	raw := got.Annotations[appspub.RuntimeContainerMetaKey]
	var set appspub.RuntimeContainerMetaSet
	if err := json.Unmarshal([]byte(raw), &set); err != nil {
		return fmt.Errorf("annotation %q: %w", raw, err)
	}
	var want []appspub.RuntimeContainerMeta
	for _, c := range pod.Spec.Containers {
		want = append(want, appspub.RuntimeContainerMeta{Name: c.Name, ContainerID: "containerd://" + ids[c.Name], RestartCount: restarts,
			Hashes: appspub.RuntimeContainerHashes{PlainHash: 0x2a, PlainHashWithoutResources: 0x2a,
				ExtractedEnvFromMetadataHash: envhash.Expected(&c, got)}})
	}
	if diff := cmp.Diff(want, set.Containers); diff != "" {
		return fmt.Errorf("containers meta (-want +got):\n%s", diff)
	}
	return nil
}

// waitForNextSecond waits until a second after the one in which the container started. A CRR's
// creation time has whole seconds; one created in the second a container started would take it
// for already recreated.
func waitForNextSecond(t *testing.T, containerID string) {
	t.Helper()
	_, started, err := containerState(context.Background(), containerID)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Second, "a new second begins after the container started", func(context.Context) error {
		if time.Now().Truncate(time.Second).After(started) {
			return nil
		}
		return errors.New("same second")
	})
}

// crrOn is a CRR for pod on the real node, with the labels the manager's webhook would set.
func crrOn(pod *corev1.Pod, name string, spec appsv1alpha1.ContainerRecreateRequestSpec) *appsv1alpha1.ContainerRecreateRequest {
	spec.PodName = pod.Name
	return &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name, Labels: map[string]string{
			appsv1alpha1.ContainerRecreateRequestPodNameKey:  pod.Name,
			appsv1alpha1.ContainerRecreateRequestPodUIDKey:   string(pod.UID),
			appsv1alpha1.ContainerRecreateRequestNodeNameKey: realNode,
		}},
		Spec: spec,
	}
}

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
	syncUntilRecreated(t, kl, crr, "the request completes with both Succeeded", func(got *appsv1alpha1.ContainerRecreateRequest) error {
		return framework.Want(got.Status.Phase == appsv1alpha1.ContainerRecreateRequestCompleted, fmt.Sprintf("phase %q", got.Status.Phase))
	})
	for _, name := range []string{"app", "web"} {
		if st, _, err := containerState(ctx, kl.ids[name]); err != nil || st != criv1.ContainerState_CONTAINER_RUNNING {
			t.Errorf("%s's new container is %v (%v), want it running: a forced request stops a container once", name, st, err)
		}
	}
}

// syncUntilRecreated hands the kubelet's container statuses to crr, then waits until every
// container of it is recorded killed and Succeeded and done says yes of the request.
func syncUntilRecreated(t *testing.T, kl *fakeKubelet, crr *appsv1alpha1.ContainerRecreateRequest, what string, done func(*appsv1alpha1.ContainerRecreateRequest) error) {
	t.Helper()
	syncStatuses(t, kl, crr)
	framework.Eventually(t, recreateTimeout, what, func(ctx context.Context) error {
		got, err := statesAre(ctx, crr, appsv1alpha1.ContainerRecreateRequestSucceeded)
		if err != nil {
			return err
		}
		return done(got)
	})
}

// statesAre reads crr and checks that each of its containers is in phase and recorded killed.
func statesAre(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, phase appsv1alpha1.ContainerRecreateRequestPhase) (*appsv1alpha1.ContainerRecreateRequest, error) {
	got, err := getCRR(ctx, crr)
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

//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const (
	ns             = "default"
	addonNS        = "kruise-system"
	sampleName     = "sample"
	maxUnavailable = 2
)

// step is one scenario; it runs on the state the steps before it left.
type step struct {
	name string
	run  func(t *testing.T, cl *cluster)
}

// TestE2E runs the scenarios in order; each step builds on the cluster state the one before left.
func TestE2E(t *testing.T) {
	cl := loadCluster(t)
	t.Logf("cluster: registry %s, node %s (%s), logs in %s, daemon scenarios: %v", cl.registry, cl.nodeName, cl.nodeIP, cl.logs, cl.daemon)
	steps := []step{
		{"install with the small spec, then status reports the manager Ready and the webhook reachable", testInstall},
		{"seed CloneSet sample of 5 replicas is defaulted by the webhook and reads sample 5 5 5 5 5", testSeed},
		{"image change updates every pod in place through the real kubelet", testInPlace},
		{"env change recreates every pod", testRecreate},
		{"kubectl-kruise rollout status follows an in-place image update of the CloneSet to completion", testKubectlPluginRolloutStatus},
		{"Advanced StatefulSet: image change in place through the real kubelet, then reserveOrdinals deletes exactly the reserved pod", testStatefulSet},
		{"Advanced DaemonSet image change updates its pod in place on the real node", testAdvancedDaemonSetInPlace},
		{"an in-place update changes the higher launch priority sidecar first and the app once the sidecar's new container is ready", testLaunchPriorityInPlace},
	}
	if cl.daemon {
		steps = append(steps, []step{
			{"daemon Ready on the node with containerd detected", testDaemonRuntime},
			{"ContainerRecreateRequest restarts a container and Completes", testContainerRecreate},
			{"a PodProbeMarker's exec probes, run by the daemon in a real container, label, annotate and condition the pod", testPodProbeMarker},
			{"a label read by env changes in place: the daemon restarts each container once and its log shows the new value", testEnvFromMetadata},
			{"ImagePullJob pre-pulls an image the node lacks, 1 of 1 succeeded", testImagePullJob},
			{"a Job whose pod has a SidecarSet-injected sidecar completes once its main container exits: the SidecarTerminator has the daemon stop the sidecar", testSidecarTerminator},
		}...)
	}
	// After the daemon steps: these pull e2e/sample:v3, which the ImagePullJob step needs absent.
	steps = append(steps, []step{
		{"SidecarSets inject into a CloneSet's pods; a sidecar image change restarts only the sidecar in place, and a hot upgrade keeps one proxy serving", testSidecarSet},
		{"a pod with Ordered launch priority starts its containers in order on the real kubelet", testLaunchPriority},
		{"as in 1.8: a SidecarSet recovers from a bad image, budgets free a deleted Deployment's pods and hold an unsettled sidecar", testFidelity},
		{"webhook outage: with the manager scaled to 0 a pod in kube-system is still created", testWebhookOutage},
		{"as in 1.8: an in-place update to another tag of the same image ID completes", testSameImageIDInPlace},
		{"uninstall is refused while the CloneSet exists and goes through after, CRDs kept", testUninstall},
		{"plain helm: the chart's pre-delete hook refuses helm uninstall naming a CloneSet, and lets it through once it is gone", testPlainHelmUninstallGate},
	}...)
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, cl) }) {
			t.Fatalf("stopping: %q failed and the later steps build on it", s.name)
		}
	}
}

func testInstall(t *testing.T, cl *cluster) {
	args := []string{"install", "--spec", "small", "--timeout", installTimeout.String(),
		"--set", "manager.hostNetwork=true",
		"--set", "webhookConfiguration.host=" + cl.nodeIP,
	}
	if cl.daemon {
		// The daemon finds the runtime socket under socketLocation (mounted at /hostvarrun).
		dir, file := filepath.Split(cl.env["CONTAINERD_SOCK"])
		args = append(args, "--set", "daemon.socketLocation="+strings.TrimSuffix(dir, "/"), "--set", "daemon.socketFile="+file)
		// The budget check of in-place updates and the SidecarTerminator are off by default, as
		// in 1.8. ImagePullJobGate is not named: with the daemon on the chart turns it on, which
		// the ImagePullJob step proves. --set splits at a bare comma, so the gates' commas are
		// escaped.
		args = append(args, "--set", `featureGates=PodUnavailableBudgetUpdateGate=true\,SidecarTerminator=true`)
	} else {
		args = append(args, "--set", "daemon.enabled=false")
	}
	if cl.bundle != "" {
		// The air-gap path: the bundle's chart, every image from the loopback registry by digest.
		args = append(args, "--bundle", cl.bundle, "--registry", cl.registry)
	} else {
		args = append(args, "--set", "imageRegistry="+cl.registry)
	}
	out, err := cl.run(t, installTimeout+kubectlDeadline, "", cl.addon, args...)
	require.NoError(t, err, "install")
	require.Regexp(t, `(?m)^ready \d+/\d+: manager \d+/\d+$`, out, "install shows its progress")
	require.Contains(t, out, "release kruise-system/kruise-addon: deployed")
	// install returns only once every component is ready (or undoes itself and fails), so the
	// manager and the daemon are ready now, not eventually.
	d := &appsv1.Deployment{}
	require.NoError(t, cl.c.Get(context.Background(), types.NamespacedName{Namespace: addonNS, Name: "kruise-controller-manager"}, d))
	require.Equal(t, int32(1), d.Status.ReadyReplicas, "install returned with the manager not ready:\n%s", out)
	if cl.bundle != "" {
		img := d.Spec.Template.Spec.Containers[0].Image
		require.Regexp(t, "^"+regexp.QuoteMeta(cl.registry+"/kruise-addon/kruise-manager@sha256:")+"[0-9a-f]{64}$", img, "the manager runs the bundle's image from the registry by digest")
		t.Logf("installed from bundle %s: manager image %s", cl.bundle, img)
	}
	if cl.daemon {
		ds := &appsv1.DaemonSet{}
		require.NoError(t, cl.c.Get(context.Background(), types.NamespacedName{Namespace: addonNS, Name: "kruise-daemon"}, ds))
		require.Equal(t, ds.Status.DesiredNumberScheduled, ds.Status.NumberReady, "install returned with the daemon not ready:\n%s", out)
		require.Equal(t, int32(1), ds.Status.NumberReady, "the daemon runs on the one node")
	}

	// Ready comes when the webhook serves; the CA bundle patch follows within moments.
	framework.Eventually(t, podTimeout, "kruise-addon status to report the manager Ready and the webhook reachable", func(context.Context) error {
		out, err := cl.addonOut("status")
		if err != nil {
			return errors.New(err.Error() + ": " + out)
		}
		return framework.Want(strings.Contains(out, "manager 1/1") && strings.Contains(out, "webhook: reachable=true"), out)
	})
	out, err = cl.run(t, kubectlDeadline, "", cl.addon, "status")
	require.NoError(t, err, "status")
	require.Contains(t, out, "manager 1/1", "status reports the manager Ready")
	require.Contains(t, out, "webhook: reachable=true", "status reports the webhook reachable")

	for _, kind := range []string{"mutatingwebhookconfiguration/kruise-mutating-webhook-configuration", "validatingwebhookconfiguration/kruise-validating-webhook-configuration"} {
		o, err := cl.kubectlOut("get", kind, "-o", "jsonpath={.webhooks[0].clientConfig.url}")
		require.NoError(t, err, o)
		require.True(t, strings.HasPrefix(o, fmt.Sprintf("https://%s:9876/", cl.nodeIP)), "%s is in URL mode, got %q", kind, o)
	}
}

func sampleCloneSet(image string) string {
	return podWorkload{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", name: sampleName, replicas: 5, grace: 1,
		containers: mainContainer(image), spec: inPlaceCloneSet(strconv.Itoa(maxUnavailable))}.String()
}

func (cl *cluster) cloneSet(t *testing.T) *appsv1alpha1.CloneSet {
	return framework.Get[appsv1alpha1.CloneSet](t, cl.c, client.ObjectKey{Namespace: ns, Name: sampleName})
}

// settled reports whether the CloneSet's status is at its generation with all replicas updated and ready.
func settled(cs *appsv1alpha1.CloneSet) (bool, string) {
	s := cs.Status
	return rollout{cs.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.UpdatedReadyReplicas, s.ReadyReplicas}.done(5)
}

func (cl *cluster) waitSettled(t *testing.T, what string) {
	t.Helper()
	framework.Eventually(t, rolloutTimeout, what, func(context.Context) error { return framework.Want(settled(cl.cloneSet(t))) })
}

type podState struct {
	uid, ip, imageID string
	restarts         int32
}

// podStates are the identities of ns's live app=<app> pods, by name.
func (cl *cluster) podStates(t *testing.T, app string) map[string]podState {
	t.Helper()
	got := map[string]podState{}
	for _, p := range framework.MustLivePods(t, cl.c, ns, app) {
		st := podState{uid: string(p.UID), ip: p.Status.PodIP}
		if len(p.Status.ContainerStatuses) > 0 {
			st.imageID = p.Status.ContainerStatuses[0].ImageID
			st.restarts = p.Status.ContainerStatuses[0].RestartCount
		}
		got[p.Name] = st
	}
	return got
}

// livePods are ns's live app=<app> pods, by name.
func (cl *cluster) livePods(ctx context.Context, app string) (map[string]*corev1.Pod, error) {
	pods, err := framework.LivePods(ctx, cl.c, ns, app)
	if err != nil {
		return nil, err
	}
	out := map[string]*corev1.Pod{}
	for i := range pods {
		out[pods[i].Name] = &pods[i]
	}
	return out, nil
}

func (cl *cluster) getCloneLine(t *testing.T) (string, []string) {
	t.Helper()
	out, err := cl.kubectlOut("get", "clone", "-n", ns)
	require.NoError(t, err, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, "kubectl get clone prints a header and one CloneSet:\n%s", out)
	return lines[0], strings.Fields(lines[1])
}

func testSeed(t *testing.T, cl *cluster) {
	_, err := cl.kubectlRun(t, sampleCloneSet(cl.registry+"/e2e/sample:v1"), "apply", "-f", "-")
	require.NoError(t, err, "apply the seed CloneSet")
	cs := cl.cloneSet(t)
	require.Equal(t, int32(10), *cs.Spec.RevisionHistoryLimit, "the mutating webhook defaulted revisionHistoryLimit")
	cl.waitSettled(t, "the seed CloneSet Ready")

	framework.Eventually(t, podTimeout, "kubectl get clone to read sample 5 5 5 5 5", func(context.Context) error {
		header, f := cl.getCloneLine(t)
		hf := strings.Fields(header)
		want := []string{"NAME", "DESIRED", "UPDATED", "UPDATED_READY", "READY", "TOTAL", "AGE"}
		if strings.Join(hf, " ") != strings.Join(want, " ") {
			return errors.New("header " + header)
		}
		return framework.Want(len(f) == 7 && strings.Join(f[:6], " ") == "sample 5 5 5 5 5", strings.Join(f, " "))
	})
	header, f := cl.getCloneLine(t)
	t.Logf("kubectl get clone:\n%s\n%s", header, strings.Join(f, "   "))
}

// unreadyWatcher follows the sample pods' Ready conditions through a watch and keeps the
// largest number of unready (or missing) pods seen at once.
type unreadyWatcher struct {
	mu       sync.Mutex
	ready    map[string]bool
	maxSeen  int
	maxWhen  string
	stop     func()
	finished chan struct{}
}

func (cl *cluster) watchUnready(t *testing.T, names []string) *unreadyWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := cl.cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=sample"})
	require.NoError(t, err, "watch pods")
	u := &unreadyWatcher{ready: map[string]bool{}, stop: cancel, finished: make(chan struct{})}
	for _, n := range names {
		u.ready[n] = true
	}
	go func() {
		defer close(u.finished)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			u.mu.Lock()
			switch ev.Type {
			case watch.Deleted:
				u.ready[p.Name] = false
			case watch.Added, watch.Modified:
				u.ready[p.Name] = p.DeletionTimestamp == nil && podReady(p)
			}
			n := 0
			var who []string
			for name, r := range u.ready {
				if !r {
					n++
					who = append(who, name)
				}
			}
			if n > u.maxSeen {
				sort.Strings(who)
				u.maxSeen, u.maxWhen = n, strings.Join(who, ",")
			}
			u.mu.Unlock()
		}
	}()
	return u
}

func (u *unreadyWatcher) result() (int, string) {
	u.stop()
	<-u.finished
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.maxSeen, u.maxWhen
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (cl *cluster) registryDigest(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	d, err := remote.Head(r)
	require.NoError(t, err, "HEAD %s in the registry", ref)
	return d.Digest.String()
}

func testInPlace(t *testing.T, cl *cluster) {
	before := cl.podStates(t, "sample")
	require.Len(t, before, 5)
	names := make([]string, 0, len(before))
	for n := range before {
		names = append(names, n)
	}
	newImage := cl.registry + "/e2e/sample:v2"
	digest := cl.registryDigest(t, newImage)
	u := cl.watchUnready(t, names)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":%q}]}}}}`, newImage)
	_, err := cl.kubectlRun(t, "", "patch", "clone", sampleName, "-n", ns, "--type", "merge", "-p", patch)
	require.NoError(t, err, "patch the image")
	framework.Eventually(t, rolloutTimeout, "every pod restarted in place on the new image", func(context.Context) error {
		if ok, msg := settled(cl.cloneSet(t)); !ok {
			return errors.New(msg)
		}
		return cl.restartedOnceOn(t, "sample", digest)
	})
	maxSeen, who := u.result()
	after := cl.podStates(t, "sample")
	cl.requireUpdatedInPlace(t, before, after, digest)
	for n, b := range before {
		require.NotEqual(t, b.imageID, after[n].imageID, "pod %s changed image", n)
	}
	require.Len(t, after, 5)
	require.LessOrEqual(t, maxSeen, maxUnavailable, "never more than maxUnavailable unready at once (worst: %s)", who)
	t.Logf("in place: 5 pods kept name, UID and IP; restartCount 1; imageID %s; at most %d unready at once (maxUnavailable %d)", digest, maxSeen, maxUnavailable)
	_, f := cl.getCloneLine(t)
	require.Equal(t, "5", f[3], "UPDATED_READY")
}

func testRecreate(t *testing.T, cl *cluster) {
	before := cl.podStates(t, "sample")
	require.Len(t, before, 5)
	// A merge patch replaces the containers list, so it repeats the image.
	img := cl.cloneSet(t).Spec.Template.Spec.Containers[0].Image
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":%q,"env":[{"name":"SAMPLE_ENV","value":"recreated"}]}]}}}}`, img)
	_, err := cl.kubectlRun(t, "", "patch", "clone", sampleName, "-n", ns, "--type", "merge", "-p", patch)
	require.NoError(t, err, "patch the env")
	oldUIDs := map[string]bool{}
	for _, st := range before {
		oldUIDs[st.uid] = true
	}
	framework.Eventually(t, rolloutTimeout, "every pod recreated with the env", func(context.Context) error {
		if ok, msg := settled(cl.cloneSet(t)); !ok {
			return errors.New(msg)
		}
		pods := cl.podStates(t, "sample")
		if len(pods) != 5 {
			return fmt.Errorf("%d pods", len(pods))
		}
		for n, st := range pods {
			if oldUIDs[st.uid] {
				return errors.New("pod " + n + " is an old one")
			}
		}
		return nil
	})
	for n, st := range cl.podStates(t, "sample") {
		require.False(t, oldUIDs[st.uid], "pod %s has a new UID", n)
		require.Equal(t, int32(0), st.restarts, "pod %s is a fresh pod", n)
	}
	for n := range cl.podStates(t, "sample") {
		out, err := cl.kubectlOut("logs", "-n", ns, n)
		require.NoError(t, err, out)
		require.Contains(t, out, "SAMPLE_ENV recreated", "pod %s runs with the new env", n)
	}
}

func (cl *cluster) scaleManager(t *testing.T, n int32) {
	t.Helper()
	_, err := cl.kubectlRun(t, "", "scale", "deployment/kruise-controller-manager", "-n", addonNS, fmt.Sprintf("--replicas=%d", n))
	require.NoError(t, err, "scale the manager")
	framework.Eventually(t, podTimeout, fmt.Sprintf("the manager at %d ready replicas and no other pod", n), func(context.Context) error {
		d := &appsv1.Deployment{}
		if err := cl.c.Get(context.Background(), types.NamespacedName{Namespace: addonNS, Name: "kruise-controller-manager"}, d); err != nil {
			return err
		}
		pods := &corev1.PodList{}
		if err := cl.c.List(context.Background(), pods, client.InNamespace(addonNS), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
			return err
		}
		return framework.Want(d.Status.ReadyReplicas == n && len(pods.Items) == int(n), fmt.Sprintf("ready %d, pods %d", d.Status.ReadyReplicas, len(pods.Items)))
	})
}

func testWebhookOutage(t *testing.T, cl *cluster) {
	cl.scaleManager(t, 0)
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: e2e-outage, namespace: kube-system}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: %s/e2e/sample:v1}
`, cl.registry)
	_, err := cl.kubectlRun(t, pod, "create", "-f", "-")
	require.NoError(t, err, "a pod in kube-system is created while no manager runs")
	framework.Eventually(t, podTimeout, "the kube-system pod Running", func(context.Context) error {
		p := &corev1.Pod{}
		if err := cl.c.Get(context.Background(), types.NamespacedName{Namespace: "kube-system", Name: "e2e-outage"}, p); err != nil {
			return err
		}
		return framework.Want(p.Status.Phase == corev1.PodRunning, string(p.Status.Phase))
	})
	// The CloneSet webhooks fail closed: an add-on object cannot be changed meanwhile.
	_, err = cl.kubectlOut("patch", "clone", sampleName, "-n", ns, "--type", "merge", "-p", `{"spec":{"replicas":4}}`)
	require.Error(t, err, "a CloneSet change is refused while its webhook is down (failurePolicy Fail)")
	_, err = cl.kubectlRun(t, "", "delete", "pod", "e2e-outage", "-n", "kube-system", "--wait=true")
	require.NoError(t, err)
	cl.scaleManager(t, 1)
	out, err := cl.run(t, kubectlDeadline, "", cl.addon, "status")
	require.NoError(t, err, "status")
	require.Contains(t, out, "webhook: reachable=true", "the webhook answers again")
}

func testUninstall(t *testing.T, cl *cluster) {
	cl.saveAddonLogs(t)
	out, err := cl.run(t, uninstallWait, "", cl.addon, "uninstall", "--timeout", uninstallWait.String())
	require.Error(t, err, "uninstall is refused while the CloneSet exists")
	require.Contains(t, strings.ToLower(out), "cloneset", "the refusal names the remaining CloneSet")

	_, err = cl.kubectlRun(t, "", "delete", "clone", sampleName, "-n", ns, "--wait=true")
	require.NoError(t, err, "delete the CloneSet")
	framework.Eventually(t, podTimeout, "the sample pods gone", func(context.Context) error {
		n := len(cl.podStates(t, "sample"))
		return framework.Want(n == 0, fmt.Sprintf("%d pods", n))
	})
	_, err = cl.run(t, uninstallWait+kubectlDeadline, "", cl.addon, "uninstall", "--timeout", uninstallWait.String())
	require.NoError(t, err, "uninstall goes through once no CloneSet is left")

	crd := &apiextensionsv1.CustomResourceDefinition{}
	err = cl.c.Get(context.Background(), types.NamespacedName{Name: "clonesets.apps.kruise.io"}, crd)
	require.NoError(t, err, "the CloneSet CRD remains after uninstall")
	framework.Eventually(t, uninstallWait, "no add-on pod left", func(context.Context) error {
		pods := &corev1.PodList{}
		if err := cl.c.List(context.Background(), pods, client.InNamespace(addonNS)); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		var left []string
		for _, p := range pods.Items {
			left = append(left, p.Name)
		}
		return framework.Want(len(left) == 0, strings.Join(left, ","))
	})
}

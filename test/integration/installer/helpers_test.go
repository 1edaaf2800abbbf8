package installer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmaction "helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const (
	// installTimeout bounds one install or upgrade, waits included, on a busy 2-core machine.
	installTimeout = 3 * time.Minute
	// failTimeout is how long a deliberately failing upgrade waits before it rolls back.
	failTimeout = 20 * time.Second
	// settleTimeout bounds waits for state the cluster reaches on its own (pods going away).
	settleTimeout = 2 * time.Minute
)

// testSet are values every test install uses: the registry the images come from (the chart
// names none, and no node pulls here), and, as no manager runs here, webhooks that do not block
// the objects the tests create and give up fast.
func testSet(extra ...string) []string {
	return append([]string{testRegistry}, testSetWithoutRegistry(extra...)...)
}

// testRegistry is testSet's image registry.
const testRegistry = "imageRegistry=registry.example.com"

// testSetWithoutRegistry is testSet without an image registry, for the tests of its absence.
func testSetWithoutRegistry(extra ...string) []string {
	return append([]string{"webhookConfiguration.failurePolicy.default=Ignore", "webhookConfiguration.timeoutSeconds=1"}, extra...)
}

func getter() genericclioptions.RESTClientGetter {
	f := genericclioptions.NewConfigFlags(false)
	k := env.Kubeconfig
	f.KubeConfig = &k
	return f
}

// newInstaller is an installer of the test cluster whose progress lines the test can read.
func newInstaller(t *testing.T) (*installer.Installer, *servertest.Buffer) {
	t.Helper()
	progress := &servertest.Buffer{}
	return connect(t, installer.WithProgress(progress)), progress
}

// connect is an installer of the test cluster made with opts.
func connect(t *testing.T, opts ...installer.Option) *installer.Installer {
	t.Helper()
	i, err := installer.New(getter(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// releaseTest starts a test of the release in namespace: its context, an installer made with
// opts, the namespace, and a cleanup that removes the release and the daemon config namespace
// whatever the test left, so that the next test starts on a cluster without the add-on.
func releaseTest(t *testing.T, namespace string, opts ...installer.Option) (context.Context, *installer.Installer, string) {
	t.Helper()
	i := connect(t, opts...)
	t.Cleanup(func() { removeRelease(t, i, namespace) })
	return context.Background(), i, namespace
}

// helmConfig is the Helm configuration of namespace's release storage, opened as the installer
// opens it.
func helmConfig(t *testing.T, namespace string) *helmaction.Configuration {
	t.Helper()
	store, err := release.Open(getter(), namespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store.Config()
}

// lastReleaseOrNil is the latest revision of the default release in namespace, nil when none.
func lastReleaseOrNil(t *testing.T, namespace string) *helmrelease.Release {
	t.Helper()
	store, err := release.Open(getter(), namespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.Last(context.Background(), installer.DefaultReleaseName)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func lastRelease(t *testing.T, namespace, name string) *helmrelease.Release {
	t.Helper()
	r, err := helmConfig(t, namespace).Releases.Last(name)
	if err != nil {
		t.Fatalf("read release %s/%s: %v", namespace, name, err)
	}
	return r
}

func managerDeployment(t *testing.T, namespace string) *appsv1.Deployment {
	t.Helper()
	d, err := env.Clientset.AppsV1().Deployments(namespace).Get(context.Background(), "kruise-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// managerPodZones returns the zone of each running, ready manager pod of the current template.
func managerPodZones(t *testing.T, namespace string) []string {
	t.Helper()
	ctx := context.Background()
	pods, err := env.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			continue
		}
		n, err := env.Clientset.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		zones = append(zones, n.Labels[corev1.LabelTopologyZone])
	}
	return zones
}

// removeRelease is a test's cleanup: the release in namespace uninstalled if there is one, and
// the daemon config namespace gone, so that the next test starts on a cluster without the add-on.
func removeRelease(t *testing.T, i *installer.Installer, namespace string) {
	t.Helper()
	if lastReleaseOrNil(t, namespace) != nil {
		uninstall(t, i, namespace)
	}
	waitNamespaceGone(t, configNamespace)
}

// uninstall removes a release and waits until its pods are gone, so the next install starts clean.
func uninstall(t *testing.T, i *installer.Installer, namespace string) {
	t.Helper()
	ctx := context.Background()
	uo := installer.UninstallOptions{Namespace: namespace}
	uo.Timeout = installTimeout
	if _, err := i.Uninstall(ctx, uo); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	framework.Eventually(t, settleTimeout, "the pods of "+namespace+" go after uninstall", func(ctx context.Context) error {
		pods, err := env.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		return framework.Want(len(pods.Items) == 0, fmt.Sprintf("%d pods remain", len(pods.Items)))
	})
}

func namespaceExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := env.Clientset.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// pollUntil waits, at most settleTimeout, until cond holds.
func pollUntil(ctx context.Context, cond func(context.Context) bool) error {
	return framework.PollUntil(ctx, settleTimeout, func(ctx context.Context) error {
		return framework.Want(cond(ctx), "not yet")
	})
}

// chartCopy copies charts/kruise into a temp dir with another version and appVersion.
func chartCopy(t *testing.T, version string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "charts", "kruise")
	dst := filepath.Join(t.TempDir(), "kruise")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dst, "Chart.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "version:"):
			l = "version: " + version
		case strings.HasPrefix(l, "appVersion:"):
			l = "appVersion: \"" + version + "\""
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

package installer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	apikinds "github.com/kruise-addon/kruise-addon/apis/kinds"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	imagepulljobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/imagepulljob"
	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// The uninstall gate refuses while a CloneSet remains and prints the command that deletes it;
// the CloneSet's validating webhook checks that DELETE and fails closed. With the manager scaled
// to 0, the printed cleanup must still work: the second uninstall lets that webhook fail open,
// the cleanup goes through, and the third uninstall removes the release. While a manager runs,
// deletion protection keeps refusing, before and after.
//
// The chart's manager pods are simulated here, so a manager runs in this process, serving the
// CloneSet and deletion protection webhooks at the URL the release's configurations call (the
// chart's URL mode); it stops when the chart's manager is scaled to 0.
func TestUninstallHasNoDeadEndWhileTheManagerIsDown(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-down")
	o := installInURLMode(t, i, ns, "ResourcesDeletionProtection=true", deletionprotection.Handlers, clonesetwebhook.Handlers)
	t.Cleanup(func() {
		// Leave nothing to block the next test, even when this one fails: without a manager, the
		// CloneSet can only go once its webhooks do.
		if lastReleaseOrNil(t, ns) != nil {
			_ = env.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), installer.ValidatingWebhookConfiguration, metav1.DeleteOptions{})
			_, _, _ = env.Kubectl(context.Background(), "delete", "clonesets.apps.kruise.io", "--all", "--all-namespaces")
			uninstall(t, i, ns)
		}
	})
	mgr := serveWebhooks(t, o)
	cs := kinds.CloneSet("web", "default").Replicas(0).Obj()
	cs.Labels = map[string]string{deletionprotection.Label: deletionprotection.Always}
	framework.Create(t, env.Client, cs)
	deleteRefused := func(t *testing.T) {
		t.Helper()
		_, stderr, err := env.Kubectl(ctx, "delete", "clonesets.apps.kruise.io", "web", "-n", "default")
		if err == nil || !strings.Contains(stderr, deletionprotection.Label) {
			t.Errorf("deleting the protected CloneSet while a manager runs: %v: %s; want it refused by deletion protection", err, stderr)
		}
	}

	t.Run("while the manager runs, uninstall is refused and changes no webhook", func(t *testing.T) {
		refused := uninstallRefused(t, i, ns)
		if len(refused.OpenedWebhooks) > 0 {
			t.Errorf("with a ready manager the uninstall opened %v", refused.OpenedWebhooks)
		}
		deleteRefused(t)
	})

	t.Run("with the manager scaled to 0, uninstall is refused and opens the CloneSet's webhook", func(t *testing.T) {
		scaleManager(t, ns, 0)
		mgr.Stop()
		refused := uninstallRefused(t, i, ns)
		if diff := cmp.Diff([]string{"vcloneset.kb.io"}, refused.OpenedWebhooks); diff != "" {
			t.Errorf("opened webhooks (-want +got):\n%s", diff)
		}
		if missing := testkit.Missing(refused.Reason, "the manager has no ready endpoint", "vcloneset.kb.io"); missing != nil {
			t.Errorf("reason %q lacks %q", refused.Reason, missing)
		}
	})

	t.Run("a manager that answers again still protects the CloneSet", func(t *testing.T) {
		again := serveWebhooks(t, o)
		deleteRefused(t)
		again.Stop()
	})

	t.Run("the printed cleanup works, and uninstall then removes the release", func(t *testing.T) {
		cleanUpThenUninstall(ctx, t, i, ns, uninstallRefused(t, i, ns))
	})
}

// An ImagePullJob carries the manager's finalizer, which only a manager removes. With the
// manager scaled to 0, the gate's printed cleanup must not wait for it, and the uninstall after
// the cleanup lets go of the deleted job and removes the release: no object is left held.
func TestUninstallLetsGoOfDeletedImagePullJobsWhileTheManagerIsDown(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-held")
	o := installInURLMode(t, i, ns, "KruiseDaemon=true,ImagePullJobGate=true", imagepulljobwebhook.Handlers)
	job := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "warm",
		// As the manager puts it on every job it sees.
		Finalizers: []string{apikinds.ImagePullJobFinalizer}},
		Spec: appsv1alpha1.ImagePullJobSpec{Image: "nginx:1.25"}}
	job.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	t.Cleanup(func() {
		_ = env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), job)
		if len(job.Finalizers) > 0 {
			job.Finalizers = nil
			_ = env.Client.Update(context.Background(), job)
		}
	})
	mgr := serveWebhooks(t, o)
	framework.Create(t, env.Client, job)
	scaleManager(t, ns, 0)
	mgr.Stop()

	refused := uninstallRefused(t, i, ns)
	if missing := testkit.Missing(refused.Reason, "imagepulljobs.apps.kruise.io --all --all-namespaces --wait=false", "uninstall again"); missing != nil {
		t.Errorf("reason %q lacks %q", refused.Reason, missing)
	}
	cleanUpThenUninstall(ctx, t, i, ns, refused)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted ImagePullJob is still there (finalizers %v): %v", job.Finalizers, err)
	}
}

// installInURLMode installs the chart in URL mode, with its own failure policies (every webhook
// but the pods' fails closed), for a manager this process runs at the returned options' port
// with only the given gates and webhooks (started by serveWebhooks).
func installInURLMode(t *testing.T, i *installer.Installer, ns, gates string, webhooks ...setup.Webhooks) *manager.Options {
	t.Helper()
	o, err := harness.LoopbackOptions(t.TempDir(), ns)
	if err != nil {
		t.Fatal(err)
	}
	o.EnableLeaderElection = false
	o.SkipControllerNameValidation = true
	o.Controllers = nil
	if err := o.Gates.Set(gates); err != nil {
		t.Fatal(err)
	}
	o.Webhooks = webhooks
	set := []string{testRegistry, "webhookConfiguration.timeoutSeconds=2", "webhookConfiguration.host=127.0.0.1", "manager.webhookPort=" + strconv.Itoa(o.WebhookPort)}
	if _, err := i.Install(context.Background(), installer.Options{Namespace: ns, Set: set, Timeout: installTimeout}); err != nil {
		t.Fatalf("install: %v", err)
	}
	return o
}

// serveWebhooks runs a manager in this process at o's port and waits until it serves.
func serveWebhooks(t *testing.T, o *manager.Options) *harness.Manager {
	t.Helper()
	m := harness.Start(context.Background(), env.Config, "manager", o)
	t.Cleanup(m.Stop)
	if err := m.WaitReady(context.Background(), framework.Long); err != nil {
		t.Fatal(err)
	}
	if err := harness.WaitForCABundle(context.Background(), env.Client, framework.Long); err != nil {
		t.Fatal(err)
	}
	return m
}

// uninstallRefused runs an uninstall that the gate must refuse, and returns the refusal.
func uninstallRefused(t *testing.T, i *installer.Installer, namespace string) *installer.RefusedError {
	t.Helper()
	_, err := i.Uninstall(context.Background(), installer.UninstallOptions{Namespace: namespace})
	var refused *installer.RefusedError
	if !errors.As(err, &refused) || len(refused.Remaining) == 0 {
		t.Fatalf("want the gate's refusal, got %v", err)
	}
	return refused
}

// cleanUpThenUninstall runs the kubectl commands that the uninstall gate's refusal prints, then
// an uninstall that must remove the release.
func cleanUpThenUninstall(ctx context.Context, t *testing.T, i *installer.Installer, ns string, refused *installer.RefusedError) {
	t.Helper()
	cleanup := printedCommands(refused.Reason)
	if len(cleanup) == 0 {
		t.Fatalf("no cleanup command in %q", refused.Reason)
	}
	for _, args := range cleanup {
		if out, stderr, err := env.Kubectl(ctx, args...); err != nil {
			t.Fatalf("the printed cleanup %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
	}
	uo := installer.UninstallOptions{Namespace: ns}
	uo.Timeout = installTimeout
	if _, err := i.Uninstall(ctx, uo); err != nil {
		t.Fatalf("uninstall after the cleanup: %v", err)
	}
	if r := lastReleaseOrNil(t, ns); r != nil {
		t.Errorf("release left: revision %d %s", r.Version, r.Info.Status)
	}
}

// scaleManager scales the release's manager and waits until it runs that many ready pods.
func scaleManager(t *testing.T, namespace string, replicas int32) {
	t.Helper()
	ctx := context.Background()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := env.Clientset.AppsV1().Deployments(namespace).Patch(ctx, "kruise-controller-manager", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, settleTimeout, fmt.Sprintf("the manager has %d pods", replicas), func(ctx context.Context) error {
		pods, err := env.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				n++
			}
		}
		return framework.Want(n == int(replicas), fmt.Sprintf("%d pods", n))
	})
}

// printedCommands are the kubectl commands a message prints, one per line, as arguments.
func printedCommands(msg string) [][]string {
	var out [][]string
	for _, line := range strings.Split(msg, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "kubectl "); ok {
			out = append(out, strings.Fields(rest))
		}
	}
	return out
}

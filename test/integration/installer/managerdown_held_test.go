package installer

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/apis/kinds"
	imagepulljobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/imagepulljob"
	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// An ImagePullJob carries the manager's finalizer, which only a manager removes. With the
// manager scaled to 0, the gate's printed cleanup must not wait for it, and the uninstall after
// the cleanup lets go of the deleted job and removes the release: no object is left held.
func TestUninstallLetsGoOfDeletedImagePullJobsWhileTheManagerIsDown(t *testing.T) {
	ctx := context.Background()
	const ns = "kruise-held"
	i, o := installInURLMode(t, ns, "KruiseDaemon=true,ImagePullJobGate=true", imagepulljobwebhook.Handlers)
	job := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "warm",
		// As the manager puts it on every job it sees.
		Finalizers: []string{kinds.ImagePullJobFinalizer}},
		Spec: appsv1alpha1.ImagePullJobSpec{Image: "nginx:1.25"}}
	job.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	t.Cleanup(func() {
		_ = env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), job)
		if len(job.Finalizers) > 0 {
			job.Finalizers = nil
			_ = env.Client.Update(context.Background(), job)
		}
		removeRelease(t, i, ns)
	})
	mgr := serveWebhooks(t, o)
	framework.Create(t, env.Client, job)
	scaleManager(t, ns, 0)
	mgr.Stop()

	refused := uninstallRefused(t, i, ns)
	cleanup := printedCommands(refused.Reason)
	if len(cleanup) == 0 {
		t.Fatalf("no cleanup command in %q", refused.Reason)
	}
	if missing := containsAll(refused.Reason, "imagepulljobs.apps.kruise.io --all --all-namespaces --wait=false", "uninstall again"); missing != nil {
		t.Errorf("reason %q lacks %q", refused.Reason, missing)
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
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted ImagePullJob is still there (finalizers %v): %v", job.Finalizers, err)
	}
}

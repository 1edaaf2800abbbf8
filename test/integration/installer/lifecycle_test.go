package installer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	helmrelease "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestLifecycle walks one release through install, upgrade, a failing upgrade, a stuck
// upgrade and uninstall; each step starts from the state the previous one left.
func TestLifecycle(t *testing.T) {
	progress := &servertest.Buffer{}
	ctx, i, ns := releaseTest(t, "kruise-system", installer.WithProgress(progress))

	t.Run("install small waits until the manager and the daemon are ready", func(t *testing.T) {
		res, err := i.Install(ctx, installer.Options{Namespace: ns, Spec: &installer.SpecChoice{Preset: spec.Small}, Set: testSet(), Timeout: installTimeout})
		if err != nil {
			t.Fatalf("install: %v", err)
		}
		got := map[string]any{"status": res.Status, "revision": res.Revision}
		if diff := cmp.Diff(map[string]any{"status": "deployed", "revision": 1}, got); diff != "" {
			t.Errorf("release (-want +got):\n%s", diff)
		}
		d := managerDeployment(t, ns)
		if diff := cmp.Diff([]int32{1, 1}, []int32{*d.Spec.Replicas, d.Status.ReadyReplicas}); diff != "" {
			t.Errorf("manager replicas, ready (-want +got):\n%s", diff)
		}
		ds, err := env.Clientset.AppsV1().DaemonSets(ns).Get(ctx, "kruise-daemon", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int32{6, 6}, []int32{ds.Status.DesiredNumberScheduled, ds.Status.NumberReady}); diff != "" {
			t.Errorf("daemon desired, ready on 6 nodes (-want +got):\n%s", diff)
		}
		nsObj, err := env.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("openkruise", nsObj.Labels["control-plane"]); diff != "" {
			t.Errorf("namespace label (-want +got):\n%s", diff)
		}
		if missing := testkit.Missing(progress.String(), "ready 2/2: manager 1/1, daemon 6/6"); missing != nil {
			t.Errorf("progress lack %q:\n%s", missing, progress.String())
		}
	})

	t.Run("status reports the release, readiness, the webhook endpoints and the daemon per node", func(t *testing.T) {
		st, err := i.Status(ctx, installer.Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		readyNodes := 0
		for _, d := range st.DaemonNodes {
			if d.Ready {
				readyNodes++
			}
		}
		got := map[string]any{
			"state": st.State, "readiness": st.Readiness.String(), "daemonNodesReady": readyNodes,
			"endpoints": st.Webhook.ReadyEndpoints > 0, "configurations": st.Webhook.Configurations,
			// No manager runs here to patch its CA in, so the webhook is not reachable.
			"caBundle": st.Webhook.CABundleSet, "reachable": st.Webhook.Reachable,
			// The daemon runs, so the chart turns ImagePullJobGate on; a deployed release needs nothing.
			"imagePullJobGate": strings.Contains(st.FeatureGates, "ImagePullJobGate=true"), "advice": st.Advice,
		}
		want := map[string]any{
			"state": "deployed", "readiness": "ready 2/2: manager 1/1, daemon 6/6", "daemonNodesReady": 6,
			"endpoints": true, "configurations": 2, "caBundle": false, "reachable": false,
			"imagePullJobGate": true, "advice": "",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		// The simulated daemon pods serve no metrics, so status says it cannot read the runtime
		// they detected instead of guessing one from the kubelet's report.
		for _, d := range st.DaemonNodes {
			if d.Runtime != nil || !strings.Contains(d.RuntimeError, "cannot read the daemon's metrics through the apiserver") {
				t.Errorf("daemon on %s: runtime %v, error %q", d.Node, d.Runtime, d.RuntimeError)
			}
		}
	})

	t.Run("upgrade with changed values keeps the earlier ones", func(t *testing.T) {
		res, err := i.Upgrade(ctx, installer.Options{Namespace: ns, Set: []string{"manager.logLevel=2"}, Timeout: installTimeout})
		if err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		if diff := cmp.Diff([]any{"deployed", 2}, []any{res.Status, res.Revision}); diff != "" {
			t.Errorf("release (-want +got):\n%s", diff)
		}
		d := managerDeployment(t, ns)
		args := d.Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "-v=2") {
			t.Errorf("manager args %v lack -v=2", args)
		}
		cfg := lastRelease(t, ns, installer.DefaultReleaseName).Config
		if diff := cmp.Diff("Ignore", cfg["webhookConfiguration"].(map[string]any)["failurePolicy"].(map[string]any)["default"]); diff != "" {
			t.Errorf("the install's values were not reused (-want +got):\n%s", diff)
		}
	})

	t.Run("the upgrade applied the CRDs server-side as kruise-addon", func(t *testing.T) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "clonesets.apps.kruise.io"}, crd); err != nil {
			t.Fatal(err)
		}
		applied := false
		for _, m := range crd.ManagedFields {
			applied = applied || (m.Manager == installer.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply)
		}
		if !applied {
			t.Errorf("no server-side apply by %s in %v", installer.FieldManager, crd.ManagedFields)
		}
	})

	t.Run("an upgrade to an older add-on is refused with the reason", func(t *testing.T) {
		older := chartCopy(t, "1.1.42")
		before := lastRelease(t, ns, installer.DefaultReleaseName).Version
		_, err := i.Upgrade(ctx, installer.Options{Namespace: ns, ChartPath: older, Timeout: installTimeout})
		var refused *installer.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("want a refusal, got %v", err)
		}
		if missing := testkit.Missing(refused.Reason, "add-on 1.2.0 -> 1.1.42", "downgrade refused"); missing != nil {
			t.Errorf("reason %q lacks %q", refused.Reason, missing)
		}
		if diff := cmp.Diff(before, lastRelease(t, ns, installer.DefaultReleaseName).Version); diff != "" {
			t.Errorf("a refused upgrade made a revision (-want +got):\n%s", diff)
		}
	})

	t.Run("a failing upgrade rolls back and leaves the release deployed at the old values", func(t *testing.T) {
		upgradeRollsBack(ctx, t, i, ns, testkit.TempFile(t, "not-ready.yaml", "manager:\n  podAnnotations:\n    "+framework.AnnotationNotReady+": \"true\"\n"))
		d := managerDeployment(t, ns)
		if _, has := d.Spec.Template.Annotations[framework.AnnotationNotReady]; has {
			t.Errorf("the manager template still has the failing annotation: %v", d.Spec.Template.Annotations)
		}
	})

	t.Run("an upgrade Helm's wait accepts but whose manager never gets ready still rolls back", func(t *testing.T) {
		// A host-network manager rolls with maxUnavailable 1, so Helm's wait is satisfied by 0
		// ready replicas of 1; the installer's own wait is not.
		upgradeRollsBack(ctx, t, i, ns, testkit.TempFile(t, "host-not-ready.yaml", "manager:\n  hostNetwork: true\n  podAnnotations:\n    "+framework.AnnotationNotReady+": \"true\"\n"))
		if d := managerDeployment(t, ns); d.Spec.Template.Spec.HostNetwork {
			t.Errorf("the manager template is still on the host network after the rollback")
		}
	})

	t.Run("a release left pending-upgrade is refused, then unlocked, then upgraded", func(t *testing.T) {
		cfg := helmConfig(t, ns)
		last := lastRelease(t, ns, installer.DefaultReleaseName)
		stuck := *last
		info := *last.Info
		info.Status, info.Description = helmrelease.StatusPendingUpgrade, "killed mid-upgrade"
		stuck.Info, stuck.Version = &info, last.Version+1
		if err := cfg.Releases.Create(&stuck); err != nil {
			t.Fatal(err)
		}
		_, err := i.Upgrade(ctx, installer.Options{Namespace: ns, Timeout: installTimeout})
		var refused *installer.RefusedError
		if !errors.As(err, &refused) || !refused.Locked {
			t.Fatalf("want a locked refusal, got %v", err)
		}
		res, err := i.Unlock(ctx, installer.Options{Namespace: ns})
		if err != nil {
			t.Fatalf("unlock: %v", err)
		}
		if missing := testkit.Missing(res.Message, "stuck pending-upgrade", "marked failed"); missing != nil {
			t.Errorf("unlock message %q lacks %q", res.Message, missing)
		}
		if diff := cmp.Diff(helmrelease.StatusFailed, lastRelease(t, ns, installer.DefaultReleaseName).Info.Status); diff != "" {
			t.Errorf("status after unlock (-want +got):\n%s", diff)
		}
		up, err := i.Upgrade(ctx, installer.Options{Namespace: ns, Timeout: installTimeout})
		if err != nil {
			t.Fatalf("upgrade after unlock: %v", err)
		}
		if diff := cmp.Diff("deployed", up.Status); diff != "" {
			t.Errorf("status after the upgrade (-want +got):\n%s", diff)
		}
	})

	t.Run("uninstall is refused while a CloneSet exists and goes through once it is deleted, keeping the CRDs", func(t *testing.T) {
		cs := kinds.CloneSet("web", "default").Obj()
		if err := env.Client.Create(ctx, cs); err != nil {
			t.Fatalf("create cloneset: %v", err)
		}
		uo := installer.UninstallOptions{Namespace: ns}
		uo.Timeout = installTimeout
		_, err := i.Uninstall(ctx, uo)
		var refused *installer.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("want a refusal, got %v", err)
		}
		if missing := testkit.Missing(refused.Reason, "CloneSet: 1 in namespace(s) default", "kubectl delete clonesets.apps.kruise.io --all --all-namespaces"); missing != nil {
			t.Errorf("refusal %q lacks %q", refused.Reason, missing)
		}
		if diff := cmp.Diff(helmrelease.StatusDeployed, lastRelease(t, ns, installer.DefaultReleaseName).Info.Status); diff != "" {
			t.Errorf("the refused uninstall touched the release (-want +got):\n%s", diff)
		}
		if err := env.Client.Delete(ctx, cs); err != nil {
			t.Fatal(err)
		}
		if err := waitGone(ctx, cs); err != nil {
			t.Fatal(err)
		}
		uninstall(t, i, ns)
		if _, err := helmConfig(t, ns).Releases.Last(installer.DefaultReleaseName); err == nil {
			t.Errorf("the release is still stored")
		}
		crds, err := env.Clientset.Discovery().ServerResourcesForGroupVersion("apps.kruise.io/v1alpha1")
		if err != nil {
			t.Fatalf("the CRDs went with the release: %v", err)
		}
		var names []string
		for _, r := range crds.APIResources {
			if !strings.Contains(r.Name, "/") {
				names = append(names, r.Name)
			}
		}
		if !slices.Contains(names, "clonesets") {
			t.Errorf("clonesets are no longer served: %v", names)
		}
	})

	t.Run("uninstall with --delete-crds removes the CRDs", func(t *testing.T) {
		if _, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout}); err != nil {
			t.Fatalf("reinstall: %v", err)
		}
		uo := installer.UninstallOptions{Namespace: ns, DeleteCRDs: true}
		uo.Timeout = installTimeout
		res, err := i.Uninstall(ctx, uo)
		if err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		if !slices.Contains(res.DeletedCRDs, "clonesets.apps.kruise.io") {
			t.Errorf("deleted CRDs %v lack clonesets", res.DeletedCRDs)
		}
		crdsGone(ctx, t, res.DeletedCRDs)
	})
}

// upgradeRollsBack upgrades the release in ns with the values file valuesFile, whose manager
// never gets ready, and fails t unless the installer rolled back: the release deployed again, two
// revisions on, at the values it had before.
func upgradeRollsBack(ctx context.Context, t *testing.T, i *installer.Installer, ns, valuesFile string) {
	t.Helper()
	before := lastRelease(t, ns, installer.DefaultReleaseName)
	_, err := i.Upgrade(ctx, installer.Options{Namespace: ns, ValueFiles: []string{valuesFile}, Timeout: failTimeout})
	var rb *installer.RolledBackError
	if !errors.As(err, &rb) {
		t.Fatalf("want a rolled-back error, got %v", err)
	}
	after := lastRelease(t, ns, installer.DefaultReleaseName)
	got := map[string]any{"status": after.Info.Status, "revision": after.Version, "rolledBackTo": rb.Revision, "config": after.Config}
	want := map[string]any{"status": helmrelease.StatusDeployed, "revision": before.Version + 2, "rolledBackTo": before.Version, "config": before.Config}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("release after rollback (-want +got):\n%s", diff)
	}
}

// crdsGone fails t unless, after an uninstall that deleted the CRDs named deleted,
// apps.kruise.io/v1alpha1 stops being served and every one of them finishes deleting (the
// suites after this one install again).
func crdsGone(ctx context.Context, t *testing.T, deleted []string) {
	t.Helper()
	err := pollUntil(ctx, func(ctx context.Context) bool {
		_, err := env.Clientset.Discovery().ServerResourcesForGroupVersion("apps.kruise.io/v1alpha1")
		return err != nil
	})
	if err != nil {
		t.Errorf("apps.kruise.io/v1alpha1 is still served: %v", err)
	}
	for _, name := range deleted {
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := waitGone(ctx, crd); err != nil {
			t.Errorf("crd %s is still there: %v", name, err)
		}
	}
}

func waitGone(ctx context.Context, obj client.Object) error {
	return pollUntil(ctx, func(ctx context.Context) bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return err != nil && client.IgnoreNotFound(err) == nil
	})
}

// An install right after an uninstall meets the daemon config namespace still terminating:
// preflight refuses it saying so, and install waits for it to go, then creates it again.
func TestInstallWaitsForATerminatingConfigNamespace(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-terminating")
	release := terminatingConfigNamespace(t)

	t.Run("preflight refuses a terminating config namespace, saying so", func(t *testing.T) {
		res, err := i.Preflight(ctx, installer.Options{Namespace: ns, Set: testSet()})
		if err != nil {
			t.Fatal(err)
		}
		var got *preflight.Verdict
		for k, v := range res.Report.Verdicts {
			if v.Check == preflight.CheckConfigNamespace {
				got = &res.Report.Verdicts[k]
			}
		}
		if got == nil || got.Severity != preflight.Refused || !strings.Contains(got.Message, "still being deleted") {
			t.Errorf("config namespace verdict %+v, want refused as still being deleted", got)
		}
	})
	t.Run("install waits for it to go and creates it again", func(t *testing.T) {
		go func() {
			time.Sleep(3 * time.Second)
			release()
		}()
		if _, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout}); err != nil {
			t.Fatalf("install: %v", err)
		}
		got := &corev1.Namespace{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: configNamespace}, got); err != nil || got.DeletionTimestamp != nil {
			t.Errorf("config namespace after install: %v, deleting %v; want it created again", err, got.DeletionTimestamp)
		}
	})
}

// terminatingConfigNamespace leaves the daemon config namespace terminating: a ConfigMap with a
// finalizer keeps it so until the returned release lets it go, which the test's cleanup does too.
func terminatingConfigNamespace(t *testing.T) (release func()) {
	t.Helper()
	const hold = "kruise-addon.io/test-hold"
	framework.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configNamespace}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configNamespace, Name: "held", Finalizers: []string{hold}}}
	framework.Create(t, env.Client, cm)
	release = func() {
		_, _ = env.Clientset.CoreV1().ConfigMaps(configNamespace).Patch(context.Background(), "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Cleanup(release)
	if err := env.Clientset.CoreV1().Namespaces().Delete(context.Background(), configNamespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return release
}

package installer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// configNamespace is the chart's default daemon config namespace: cluster-wide, so a release
// must be gone, with it, before the next one can be installed.
const configNamespace = "kruise-daemon-config"

// races is how many times each race below is run.
const races = 6

// Two installs of the add-on into two namespaces of one cluster, started at the same moment by
// two installers, in both orders: exactly one ends deployed; the other is refused, naming the
// winner, with nothing applied (no release, not even its namespace); installing the loser again
// is refused naming the winner deployed; and uninstalling the loser leaves every object of the
// winner in place.
func TestTwoInstallsIntoTwoNamespacesEndWithOneRelease(t *testing.T) {
	ctx := context.Background()
	for n := range races {
		a, b := fmt.Sprintf("race-%d-a", n), fmt.Sprintf("race-%d-b", n)
		order := []string{a, b}
		if n%2 == 1 {
			order = []string{b, a}
		}
		t.Run(fmt.Sprintf("%s and %s at once, %s started first", a, b, order[0]), func(t *testing.T) {
			errs := raceInstalls(ctx, t, order...)
			winner, loser := "", ""
			for _, ns := range order {
				if errs[ns] == nil {
					winner = ns
				} else {
					loser = ns
				}
			}
			if winner == "" || loser == "" {
				t.Fatalf("want exactly one install to succeed: %s: %v; %s: %v", a, errs[a], b, errs[b])
			}
			t.Cleanup(func() {
				uninstall(t, newInstallerOnly(t), winner)
				waitNamespaceGone(t, configNamespace)
			})
			t.Logf("%s won; %s: %v", winner, loser, errs[loser])
			assertRefusedBy(t, errs[loser], winner)
			if r := lastRelease(t, winner, installer.DefaultReleaseName); r.Info.Status != helmrelease.StatusDeployed {
				t.Errorf("the winner's release is %s, want deployed", r.Info.Status)
			}
			if r := lastReleaseOrNil(t, loser); r != nil {
				t.Errorf("the refused install stored revision %d (%s)", r.Version, r.Info.Status)
			}
			if namespaceExists(t, loser) {
				t.Errorf("the refused install created namespace %s", loser)
			}
			_, err := newInstallerOnly(t).Install(ctx, installer.Options{Namespace: loser, Set: testSet(), Timeout: installTimeout})
			assertRefusedBy(t, err, winner)
			var refused *installer.RefusedError
			if errors.As(err, &refused) && refused.InUse != nil && refused.InUse.State != "deployed" {
				t.Errorf("an install after the race names the winner %q, want deployed", refused.InUse.State)
			}
			res, err := newInstallerOnly(t).Uninstall(ctx, installer.UninstallOptions{Namespace: loser})
			if err != nil {
				t.Fatalf("uninstall the loser: %v", err)
			}
			if diff := cmp.Diff(release.StepNone, res.Step); diff != "" {
				t.Errorf("uninstall of the loser (-want +got):\n%s", diff)
			}
			assertAllPresent(t, winner)
		})
	}
}

// raceInstalls starts one install per namespace, each with its own installer, at the same
// moment, in that order, and returns their errors.
func raceInstalls(ctx context.Context, t *testing.T, namespaces ...string) map[string]error {
	t.Helper()
	for _, ns := range namespaces {
		if namespaceExists(t, ns) {
			t.Fatalf("namespace %s exists before the race", ns)
		}
	}
	start := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := map[string]error{}
	for _, ns := range namespaces {
		i := newInstallerOnly(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout})
			mu.Lock()
			defer mu.Unlock()
			errs[ns] = err
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func newInstallerOnly(t *testing.T) *installer.Installer {
	i, _ := newInstaller(t)
	return i
}

// assertRefusedBy checks err is the refusal of an install because the add-on is installed, or
// being installed, in winner, named with its state.
func assertRefusedBy(t *testing.T, err error, winner string) {
	t.Helper()
	var refused *installer.RefusedError
	if !errors.As(err, &refused) || refused.InUse == nil {
		t.Fatalf("want a refusal naming the other release, got %v", err)
	}
	if diff := cmp.Diff([]string{winner, installer.DefaultReleaseName}, []string{refused.InUse.Namespace, refused.InUse.Release}); diff != "" {
		t.Errorf("the release named (-want +got):\n%s", diff)
	}
	if refused.InUse.State == "" || !strings.Contains(err.Error(), winner+"/"+installer.DefaultReleaseName) || !strings.Contains(err.Error(), "once per cluster") {
		t.Errorf("the refusal %q does not name release %s/%s and its state %q", err, winner, installer.DefaultReleaseName, refused.InUse.State)
	}
	if diff := cmp.Diff(installer.ExitRefused, installer.ExitClass(err)); diff != "" {
		t.Errorf("exit class (-want +got):\n%s", diff)
	}
}

// assertAllPresent checks every object the release of namespace applied still exists.
func assertAllPresent(t *testing.T, namespace string) {
	t.Helper()
	_, absent, err := presence(namespace, lastRelease(t, namespace, installer.DefaultReleaseName).Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(absent) > 0 {
		t.Errorf("objects of release %s/%s are gone: %s", namespace, installer.DefaultReleaseName, strings.Join(absent, ", "))
	}
}

// A release whose install failed on objects another release had created names those objects in
// its manifest (as a race between two installs once left one behind). Uninstalling it deletes
// only the objects that carry its own ownership and reports the others as kept: the other
// release's ClusterRoles, webhook configurations and daemon config namespace stay.
func TestUninstallDeletesOnlyItsOwnReleasesObjects(t *testing.T) {
	ctx := context.Background()
	const winner, loser = "owned-a", "owned-b"
	i, _ := newInstaller(t)
	if _, err := i.Install(ctx, installer.Options{Namespace: winner, Set: testSet(), Timeout: installTimeout}); err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Cleanup(func() {
		uninstall(t, i, winner)
		waitNamespaceGone(t, configNamespace)
	})
	framework.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: loser}})
	storeFailedRelease(t, loser)
	// The one object the failed install created before it failed: its own ServiceAccount.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kruise-manager", Namespace: loser, Annotations: map[string]string{
		helmReleaseName: installer.DefaultReleaseName, helmReleaseNamespace: loser,
	}}}
	framework.Create(t, env.Client, sa)

	res, err := i.Uninstall(ctx, installer.UninstallOptions{Namespace: loser})
	if err != nil {
		t.Fatalf("uninstall %s: %v", loser, err)
	}
	owner := fmt.Sprintf("(owned by release %s/%s)", winner, installer.DefaultReleaseName)
	for _, want := range []string{
		"ClusterRole kruise-manager-role " + owner,
		"ClusterRoleBinding kruise-manager-rolebinding " + owner,
		"MutatingWebhookConfiguration kruise-mutating-webhook-configuration " + owner,
		"ValidatingWebhookConfiguration kruise-validating-webhook-configuration " + owner,
		"Namespace " + configNamespace + " " + owner,
	} {
		if !slices.Contains(res.Kept, want) {
			t.Errorf("kept %q lacks %q", res.Kept, want)
		}
	}
	assertAllPresent(t, winner)
	if r := lastRelease(t, winner, installer.DefaultReleaseName); r.Info.Status != helmrelease.StatusDeployed {
		t.Errorf("the other release is %s, want deployed", r.Info.Status)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Errorf("the uninstalled release's own ServiceAccount: %v, want it deleted", err)
	}
	if r := lastReleaseOrNil(t, loser); r != nil {
		t.Errorf("release %s/%s is still there: revision %d %s", loser, r.Name, r.Version, r.Info.Status)
	}
}

// storeFailedRelease stores, in namespace, a failed first revision of the default release whose
// manifest is the chart rendered for that namespace.
func storeFailedRelease(t *testing.T, namespace string) {
	t.Helper()
	ch, err := chartsource.Load("")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := chartutil.ParseKubeVersion(installer.DefaultKubeVersion())
	if err != nil {
		t.Fatal(err)
	}
	act := release.NewRender(release.RenderConfig(), release.Options{ReleaseName: installer.DefaultReleaseName, Namespace: namespace, KubeVersion: kv})
	rel, err := act.RunWithContext(context.Background(), ch, map[string]any{"installation": map[string]any{"namespace": namespace}, "imageRegistry": strings.TrimPrefix(testRegistry, "imageRegistry=")})
	if err != nil {
		t.Fatal(err)
	}
	rel.Version = 1
	rel.SetStatus(helmrelease.StatusFailed, "failed: resources exist that belong to another release")
	if err := helmConfig(t, namespace).Releases.Create(rel); err != nil {
		t.Fatal(err)
	}
}

// An install that fails with no release left gives its namespace back as it found it: one it
// created is deleted when it holds nothing but the release's objects, and kept without the
// add-on's label (which keeps the pod webhooks out) when it holds a user's object; the label it
// added to an existing namespace is taken off.
func TestFailedInstallGivesBackTheNamespaceItCreated(t *testing.T) {
	ctx := context.Background()
	// A ClusterRole of the chart's name that nobody's release owns: Helm refuses the install
	// before it stores a release.
	conflict := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "kruise-daemon-role"}}
	cases := map[string]struct {
		namespace string
		// existing creates the namespace, unlabelled, before the install.
		existing bool
		// userObject is created in the namespace while the install waits for a manager that
		// never gets ready.
		userObject bool
		wantExists bool
		wantMsg    string
	}{
		"a namespace Helm never got to use is deleted": {
			namespace: "giveback-new", wantMsg: "namespace giveback-new (created by this install) deleted",
		},
		"the label added to an existing namespace is taken off": {
			namespace: "giveback-old", existing: true, wantExists: true,
			wantMsg: "label control-plane=openkruise taken off namespace giveback-old again",
		},
		"a namespace holding a user's ConfigMap is kept without the label": {
			namespace: "giveback-held", userObject: true, wantExists: true,
			wantMsg: "namespace giveback-held (created by this install) kept without the control-plane=openkruise label, since it holds ConfigMap user-settings",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i, _ := newInstaller(t)
			o := installer.Options{Namespace: tc.namespace, Set: testSet(), Timeout: installTimeout}
			if tc.existing {
				framework.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.namespace}})
			}
			if tc.userObject {
				o.Timeout = failTimeout
				o.ValueFiles = []string{testkit.TempFile(t, "never-ready.yaml", "manager:\n  podAnnotations:\n    "+framework.AnnotationNotReady+": \"true\"\n")}
				go func() {
					_ = pollUntil(ctx, func(ctx context.Context) bool {
						cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-settings", Namespace: tc.namespace}}
						return env.Client.Create(ctx, cm) == nil
					})
				}()
			} else {
				c := conflict.DeepCopy()
				framework.Create(t, env.Client, c)
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), c) })
			}
			t.Cleanup(func() {
				if r := lastReleaseOrNil(t, tc.namespace); r != nil {
					uninstall(t, i, tc.namespace)
				}
				if tc.wantExists {
					_ = env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.namespace}})
				}
				waitNamespaceGone(t, configNamespace)
			})

			_, err := i.Install(ctx, o)
			t.Logf("install: %v", err)
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("want an error saying %q, got %v", tc.wantMsg, err)
			}
			if r := lastReleaseOrNil(t, tc.namespace); r != nil {
				t.Errorf("want no release left, got revision %d %s", r.Version, r.Info.Status)
			}
			framework.Eventually(t, settleTimeout, "namespace "+tc.namespace+" as the install found it", func(ctx context.Context) error {
				ns := &corev1.Namespace{}
				err := env.Client.Get(ctx, client.ObjectKey{Name: tc.namespace}, ns)
				switch {
				case !tc.wantExists:
					return framework.Want(apierrors.IsNotFound(err), fmt.Sprintf("still there: %v", err))
				case err != nil:
					return err
				}
				return framework.Want(ns.DeletionTimestamp == nil && ns.Labels[installer.NamespaceLabelKey] == "",
					fmt.Sprintf("deleting %v, labels %v", ns.DeletionTimestamp != nil, ns.Labels))
			})
			if !tc.userObject {
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(conflict), &rbacv1.ClusterRole{}); err != nil {
					t.Errorf("the ClusterRole nobody's release owns: %v", err)
				}
			}
		})
	}
}

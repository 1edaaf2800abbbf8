package installer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// Helm's ownership metadata, as the chart's objects carry it.
const (
	helmManagedBy        = "app.kubernetes.io/managed-by"
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// metaOf is the labels and annotations of an object, to compare before and after.
type metaOf struct {
	Labels      map[string]string
	Annotations map[string]string
}

func namespaceMeta(t *testing.T, name string) metaOf {
	t.Helper()
	ns, err := env.Clientset.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace %s: %v", name, err)
	}
	if ns.DeletionTimestamp != nil {
		t.Fatalf("namespace %s is being deleted", name)
	}
	return metaOf{Labels: ns.Labels, Annotations: ns.Annotations}
}

// refusalText is every refused verdict's message and fix, or the reason, of a refusal.
func refusalText(t *testing.T, err error) string {
	t.Helper()
	var refused *installer.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("want a refusal, got %v", err)
	}
	if refused.Preflight == nil {
		return refused.Reason
	}
	var b strings.Builder
	for _, v := range refused.Preflight.Refusals() {
		fmt.Fprintf(&b, "%s: %s (fix: %s)\n", v.Check, v.Message, v.Fix)
	}
	return b.String()
}

// waitNamespaceGone waits for a namespace the release deleted to be gone, so that the next
// install can create it again.
func waitNamespaceGone(t *testing.T, name string) {
	t.Helper()
	if err := pollUntil(context.Background(), func(ctx context.Context) bool {
		_, err := env.Clientset.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return err != nil && client.IgnoreNotFound(err) == nil
	}); err != nil {
		t.Fatalf("namespace %s still there: %v", name, err)
	}
}

// TestInstallNeverTakesANamespaceItDidNotCreate uses a user's namespace, victim, holding a
// Secret, as daemon.configNamespace, before and after a release has left kept CRDs behind.
// The release must never take it over, and so never delete it.
func TestInstallNeverTakesANamespaceItDidNotCreate(t *testing.T) {
	ctx := context.Background()
	const ns, victim = "kruise-own", "victim"
	i, _ := newInstaller(t)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victim, Labels: map[string]string{"team": "payments"}}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "keep-me"}, StringData: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	victimBefore := namespaceMeta(t, victim)
	kubeSystemBefore := namespaceMeta(t, "kube-system")
	untouched := func(t *testing.T) {
		t.Helper()
		if diff := cmp.Diff(victimBefore, namespaceMeta(t, victim)); diff != "" {
			t.Errorf("namespace %s was changed (-before +after):\n%s", victim, diff)
		}
		if _, err := env.Clientset.CoreV1().Secrets(victim).Get(ctx, "keep-me", metav1.GetOptions{}); err != nil {
			t.Errorf("the Secret in %s: %v", victim, err)
		}
	}
	noRelease := func(t *testing.T) {
		t.Helper()
		if _, err := helmConfig(t, ns).Releases.Last(installer.DefaultReleaseName); err == nil {
			t.Errorf("a refused install stored a release")
		}
	}

	t.Run("an existing namespace as daemon.configNamespace is refused and left untouched", func(t *testing.T) {
		_, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet("daemon.configNamespace=" + victim), Timeout: installTimeout})
		if missing := testkit.Missing(refusalText(t, err), `daemon.configNamespace "victim"`, "exists"); missing != nil {
			t.Errorf("refusal lacks %q:\n%s", missing, refusalText(t, err))
		}
		untouched(t)
		noRelease(t)
	})

	t.Run("kube-system as daemon.configNamespace is bad input and left untouched", func(t *testing.T) {
		_, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet("daemon.configNamespace=kube-system"), Timeout: installTimeout})
		if !installer.IsInvalid(err) {
			t.Fatalf("want bad input, got %v", err)
		}
		if missing := testkit.Missing(err.Error(), `daemon.configNamespace: "kube-system" is a system namespace`); missing != nil {
			t.Errorf("error %q lacks %q", err, missing)
		}
		if diff := cmp.Diff(kubeSystemBefore, namespaceMeta(t, "kube-system")); diff != "" {
			t.Errorf("kube-system was changed (-before +after):\n%s", diff)
		}
		noRelease(t)
	})

	t.Run("install and uninstall leave the CRDs behind", func(t *testing.T) {
		if _, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout}); err != nil {
			t.Fatalf("install: %v", err)
		}
		uninstall(t, i, ns)
		waitNamespaceGone(t, "kruise-daemon-config")
		if _, err := env.Clientset.Discovery().ServerResourcesForGroupVersion("apps.kruise.io/v1alpha1"); err != nil {
			t.Fatalf("the CRDs went with the release: %v", err)
		}
		untouched(t)
	})

	t.Run("with kept CRDs, an existing namespace as daemon.configNamespace is still refused and left untouched", func(t *testing.T) {
		_, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet("daemon.configNamespace=" + victim), Timeout: installTimeout})
		if missing := testkit.Missing(refusalText(t, err), `daemon.configNamespace "victim"`); missing != nil {
			t.Errorf("refusal lacks %q:\n%s", missing, refusalText(t, err))
		}
		untouched(t)
		noRelease(t)
	})

	t.Run("a reinstall adopts a kept CRD that lost its owner, and nothing else", func(t *testing.T) {
		// As a CRD applied by hand, or left by another installation, would be.
		strip := fmt.Sprintf(`{"metadata":{"labels":{%q:null},"annotations":{%q:null,%q:null}}}`, helmManagedBy, helmReleaseName, helmReleaseNamespace)
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "clonesets.apps.kruise.io"}}
		if err := env.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(strip))); err != nil {
			t.Fatal(err)
		}
		if _, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout}); err != nil {
			t.Fatalf("reinstall: %v", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			t.Fatal(err)
		}
		got := []string{crd.Labels[helmManagedBy], crd.Annotations[helmReleaseName], crd.Annotations[helmReleaseNamespace]}
		if diff := cmp.Diff([]string{"Helm", installer.DefaultReleaseName, ns}, got); diff != "" {
			t.Errorf("the kept CRD's owner after the reinstall (-want +got):\n%s", diff)
		}
		untouched(t)
	})

	t.Run("the uninstall after the reinstall deletes the namespace it created and no other", func(t *testing.T) {
		uninstall(t, i, ns)
		waitNamespaceGone(t, "kruise-daemon-config")
		untouched(t)
	})
}

// otherProduct is a CRD of another product in the kruise API family, and one object of it.
type otherProduct struct {
	group, kind, plural string
}

func (p otherProduct) crdName() string { return p.plural + "." + p.group }

func (p otherProduct) crd() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: p.crdName()},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: p.group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: p.kind, ListKind: p.kind + "List", Plural: p.plural, Singular: strings.ToLower(p.kind)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}},
			}},
		},
	}
}

func (p otherProduct) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(p.group + "/v1alpha1")
	u.SetKind(p.kind)
	u.SetNamespace("default")
	u.SetName("theirs")
	return u
}

// TestOtherKruiseProductsAreLeftAlone installs beside the CRDs and objects of two other products
// of the kruise API family and removes the add-on with --delete-crds: theirs must stay as they
// were, ours must go.
func TestOtherKruiseProductsAreLeftAlone(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-beside")
	products := []otherProduct{
		{group: "rollouts.kruise.io", kind: "Rollout", plural: "rollouts"},
		{group: "game.kruise.io", kind: "GameServerSet", plural: "gameserversets"},
	}
	before := map[string]metaOf{}
	for _, p := range products {
		crd := p.crd()
		if err := env.Client.Create(ctx, crd); err != nil {
			t.Fatalf("create crd %s: %v", p.crdName(), err)
		}
		// The object can only be created once the new resource is served.
		if err := pollUntil(ctx, func(ctx context.Context) bool { return env.Client.Create(ctx, p.object()) == nil }); err != nil {
			t.Fatalf("create a %s: %v", p.kind, err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			t.Fatal(err)
		}
		before[p.crdName()] = metaOf{Labels: crd.Labels, Annotations: crd.Annotations}
	}
	theirs := func(t *testing.T) {
		t.Helper()
		for _, p := range products {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: p.crdName()}, crd); err != nil {
				t.Errorf("crd %s: %v", p.crdName(), err)
				continue
			}
			if crd.DeletionTimestamp != nil {
				t.Errorf("crd %s is being deleted", p.crdName())
			}
			if diff := cmp.Diff(before[p.crdName()], metaOf{Labels: crd.Labels, Annotations: crd.Annotations}); diff != "" {
				t.Errorf("crd %s was changed (-before +after):\n%s", p.crdName(), diff)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p.object()), p.object()); err != nil {
				t.Errorf("the %s object: %v", p.kind, err)
			}
		}
	}

	t.Run("the facts do not count other products' CRDs as ours", func(t *testing.T) {
		f, err := i.Facts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var counted []string
		for _, c := range f.CRDs {
			for _, p := range products {
				if c.Name == p.crdName() {
					counted = append(counted, c.Name)
				}
			}
		}
		if diff := cmp.Diff([]string(nil), counted); diff != "" {
			t.Errorf("other products' CRDs in the add-on's facts (-want +got):\n%s", diff)
		}
	})

	t.Run("install succeeds beside them and leaves them alone", func(t *testing.T) {
		res, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout})
		if err != nil {
			t.Fatalf("install: %v", err)
		}
		if diff := cmp.Diff("deployed", res.Status); diff != "" {
			t.Errorf("release status (-want +got):\n%s", diff)
		}
		theirs(t)
	})

	t.Run("uninstall --delete-crds deletes our CRDs and leaves theirs with their objects", func(t *testing.T) {
		uo := installer.UninstallOptions{Namespace: ns, DeleteCRDs: true}
		uo.Timeout = installTimeout
		res, err := i.Uninstall(ctx, uo)
		if err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		var deletedTheirs []string
		for _, p := range products {
			if slices.Contains(res.DeletedCRDs, p.crdName()) {
				deletedTheirs = append(deletedTheirs, p.crdName())
			}
		}
		if diff := cmp.Diff([]string(nil), deletedTheirs); diff != "" {
			t.Errorf("deleted CRDs of other products (-want +got):\n%s", diff)
		}
		if !slices.Contains(res.DeletedCRDs, "clonesets.apps.kruise.io") || !slices.Contains(res.DeletedCRDs, "podunavailablebudgets.policy.kruise.io") {
			t.Errorf("deleted CRDs %v lack ours", res.DeletedCRDs)
		}
		theirs(t)
		crdsGone(ctx, t, res.DeletedCRDs)
	})

	for _, p := range products {
		if err := env.Client.Delete(ctx, p.crd()); err != nil {
			t.Errorf("clean up crd %s: %v", p.crdName(), err)
		}
	}
}

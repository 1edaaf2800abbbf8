package installer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// An install that Helm accepts but whose add-on never becomes ready is rolled back to
// nothing, as --atomic promises: no release, none of its objects, not even the namespace it
// created; only the CRDs, which the chart keeps. The error says so. Helm's own wait failing
// and the installer's readiness wait failing end the same way.
func TestFailedInstallIsRolledBackToNothing(t *testing.T) {
	cases := map[string]struct {
		namespace string
		values    string
	}{
		"a manager Helm's wait never sees ready": {
			namespace: "kruise-never-ready",
			values:    "manager:\n  podAnnotations:\n    " + framework.AnnotationNotReady + ": \"true\"\n",
		},
		// A single host-network manager rolls with maxUnavailable 1, so Helm's wait is satisfied
		// by 0 ready replicas and Helm records the release deployed; the installer's wait is not.
		"a manager only the installer's wait sees not ready": {
			namespace: "kruise-host-never-ready",
			values:    "manager:\n  hostNetwork: true\n  podAnnotations:\n    " + framework.AnnotationNotReady + ": \"true\"\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			i, _ := newInstaller(t)
			if namespaceExists(t, tc.namespace) {
				t.Fatalf("namespace %s exists before the install", tc.namespace)
			}
			vf := testkit.TempFile(t, "never-ready.yaml", tc.values)
			o := installer.Options{Namespace: tc.namespace, ValueFiles: []string{vf}, Set: testSet(), Timeout: failTimeout}
			manifest, err := installer.Render(ctx, installer.RenderOptions{Options: o})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// Leave nothing to block the next test, even when this one fails.
				if r := lastReleaseOrNil(t, tc.namespace); r != nil {
					if _, err := i.Unlock(context.Background(), installer.Options{Namespace: tc.namespace}); err != nil {
						t.Errorf("unlock: %v", err)
					}
					uninstall(t, i, tc.namespace)
				}
			})

			_, err = i.Install(ctx, o)
			t.Logf("install: %v", err)
			var rb *installer.RolledBackError
			if !errors.As(err, &rb) {
				t.Fatalf("want a rolled-back error, got %v", err)
			}
			got := map[string]any{"command": rb.Command, "uninstalled": rb.Uninstalled, "deletedNamespace": rb.DeletedNamespace}
			want := map[string]any{"command": "install", "uninstalled": true, "deletedNamespace": tc.namespace}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rolled back (-want +got):\n%s", diff)
			}
			if missing := testkit.Missing(err.Error(), "install failed and was rolled back to nothing", "release kruise-addon uninstalled",
				"namespace "+tc.namespace+" (created by this install) deleted", "CRDs kept, no custom resource deleted", "not ready"); missing != nil {
				t.Errorf("message %q lacks %q", err.Error(), missing)
			}
			if r := lastReleaseOrNil(t, tc.namespace); r != nil {
				t.Errorf("want no release left, got revision %d %s", r.Version, r.Info.Status)
			}
			framework.Eventually(t, settleTimeout, "the failed install's objects go", func(ctx context.Context) error {
				left, err := leftovers(tc.namespace, manifest)
				if err != nil {
					return err
				}
				return framework.Want(len(left) == 0, fmt.Sprintf("still there: %s", strings.Join(left, ", ")))
			})
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: "clonesets.apps.kruise.io"}, crd); err != nil {
				t.Errorf("the CRDs were not kept: %v", err)
			}
		})
	}
}

// leftovers names the objects of manifest, CRDs aside, that still exist, and the namespace.
func leftovers(namespace, manifest string) ([]string, error) {
	left, _, err := presence(namespace, manifest)
	if err != nil {
		return nil, err
	}
	if _, err := env.Clientset.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{}); err == nil {
		left = append(left, "Namespace "+namespace)
	}
	return left, nil
}

// presence splits the objects of manifest, CRDs aside, into those that exist and those that do
// not, read through namespace's Helm configuration.
func presence(namespace, manifest string) (present, absent []string, err error) {
	store, err := release.Open(getter(), namespace, nil)
	if err != nil {
		return nil, nil, err
	}
	infos, err := store.Config().KubeClient.Build(strings.NewReader(manifest), false)
	if err != nil {
		return nil, nil, err
	}
	for _, info := range infos {
		kind := info.Mapping.GroupVersionKind.Kind
		if kind == "CustomResourceDefinition" {
			continue
		}
		_, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
		switch {
		case err == nil:
			present = append(present, kind+" "+info.Name)
		case apierrors.IsNotFound(err):
			absent = append(absent, kind+" "+info.Name)
		default:
			return nil, nil, err
		}
	}
	return present, absent, nil
}

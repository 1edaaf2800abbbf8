package installer

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// An install right after an uninstall meets the daemon config namespace still terminating:
// preflight refuses it saying so, and install waits for it to go, then creates it again.
func TestInstallWaitsForATerminatingConfigNamespace(t *testing.T) {
	ctx := context.Background()
	const ns = "kruise-terminating"
	const hold = "kruise-addon.io/test-hold"
	i, _ := newInstaller(t)
	t.Cleanup(func() { removeRelease(t, i, ns) })
	framework.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configNamespace}})
	// A ConfigMap with a finalizer keeps the namespace terminating until the test lets it go.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configNamespace, Name: "held", Finalizers: []string{hold}}}
	framework.Create(t, env.Client, cm)
	release := func() {
		_, _ = env.Clientset.CoreV1().ConfigMaps(configNamespace).Patch(context.Background(), "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Cleanup(release)
	if err := env.Clientset.CoreV1().Namespaces().Delete(ctx, configNamespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

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

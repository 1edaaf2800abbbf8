package protection

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// deleteNamespace starts the deletion of ns.
func deleteNamespace(t *testing.T, ns string) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("delete namespace %s: %v", ns, err)
	}
}

// namespaceGone waits until the namespace controller has emptied ns and removed it.
func namespaceGone(t *testing.T, ns string) {
	t.Helper()
	framework.Eventually(t, framework.Long, "namespace "+ns+" deleted", func(ctx context.Context) error {
		err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("namespace %s still exists", ns)
	})
}

// TestAProtectedDeploymentKeepsItsNamespaceTerminating: the namespace controller cannot delete
// a Deployment labelled policy.kruise.io/delete-protection=Always, so its namespace stays
// Terminating until someone removes the label, as in 1.8; the refusal keeps 1.8's rule and
// says how to unblock. With --deletion-protection-allow-in-terminating-namespace the protected
// objects of a namespace being deleted go with it, while outside such a namespace the label
// still refuses.
func TestAProtectedDeploymentKeepsItsNamespaceTerminating(t *testing.T) {
	t.Run("by default as in 1.8 the namespace stays Terminating until the label is removed", func(t *testing.T) {
		useManager(t, false)
		ns := framework.NewNamespace(t, env.Client, "protect-stuck-", nil)
		d := deployment("web", ns, 0, deletionprotection.Always)
		framework.Create(t, env.Client, d)
		deleteNamespace(t, ns)

		refusal := fmt.Sprintf("forbidden by ResourcesProtectionDeletion for %s=Always; Deployment %s/web: remove the label first", deletionprotection.Label, ns)
		framework.Eventually(t, framework.Medium, "the namespace controller reports the refusal", func(ctx context.Context) error {
			cur := &corev1.Namespace{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, cur); err != nil {
				return err
			}
			for _, c := range cur.Status.Conditions {
				if c.Type == corev1.NamespaceDeletionContentFailure && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, refusal) {
					return nil
				}
			}
			return fmt.Errorf("phase %s, conditions %+v: no NamespaceDeletionContentFailure with the refusal yet", cur.Status.Phase, cur.Status.Conditions)
		})
		if msg := refused(t, d); !strings.Contains(msg, refusal) {
			t.Errorf("refusal %q, want 1.8's rule and the way out unchanged: %q", msg, refusal)
		}

		setLabel(t, d, "")
		namespaceGone(t, ns)
	})

	t.Run("with allowInTerminatingNamespace the protected objects go with their namespace", func(t *testing.T) {
		useManager(t, true)
		live := framework.NewNamespace(t, env.Client, "protect-live-", nil)
		kept := deployment("web", live, 0, deletionprotection.Always)
		framework.Create(t, env.Client, kept)
		wantMessage(t, refused(t, kept), "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always;", "Deployment "+live+"/web", "remove the label")
		setLabel(t, kept, "")

		ns := framework.NewNamespace(t, env.Client, "protect-going-", nil)
		framework.Create(t, env.Client, deployment("web", ns, 2, deletionprotection.Always))
		cs := kinds.CloneSet("clone", ns).Replicas(3).Obj()
		cs.Labels = map[string]string{deletionprotection.Label: deletionprotection.Cascading}
		framework.Create(t, env.Client, cs)
		deleteNamespace(t, ns)
		namespaceGone(t, ns)
	})
}

package resourcedistribution

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// bootstrapToken is a Secret that, in kube-system, lets whoever knows it join nodes to the
// cluster and authenticate as a bootstrapper.
func bootstrapToken(id string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
		"metadata":   map[string]any{"name": "bootstrap-token-" + id},
		"stringData": map[string]any{"token-id": id, "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true"},
	}
}

// distributor is a user who may create, update and delete ResourceDistributions and nothing
// else, with create and update on Secrets in secretNamespaces only; it returns a client acting
// as that user.
func distributor(t *testing.T, secretNamespaces ...string) (string, client.Client) {
	t.Helper()
	user := uniqueName(t) + "-author"
	framework.Grant(t, env.Client, user, "", user, rbacv1.PolicyRule{
		APIGroups: []string{appsv1alpha1.GroupVersion.Group}, Resources: []string{"resourcedistributions"},
		Verbs: []string{"get", "create", "update", "delete"},
	})
	for _, ns := range secretNamespaces {
		framework.Grant(t, env.Client, user, ns, user, rbacv1.PolicyRule{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update"},
		})
	}
	return user, env.ClientAs(t, user)
}

// hasSecret waits until ns holds a copy of rd's Secret name.
func hasSecret(t *testing.T, rd *appsv1alpha1.ResourceDistribution, ns, name string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, fmt.Sprintf("a copy of Secret %s in %s", name, ns), func(ctx context.Context) error {
		s, err := secretIn(ctx, ns, name)
		if err != nil || s == nil {
			return framework.Want(false, fmt.Sprintf("no copy yet (%v)", err))
		}
		ref := metav1.GetControllerOf(s)
		return framework.Want(ref != nil && ref.UID == rd.UID, fmt.Sprintf("controller reference %+v, want the ResourceDistribution", ref))
	})
}

// deleteCopyAfter deletes the Secret name in ns when the test ends: no garbage collector runs in
// the test bed, and a copy left in kube-system would outlive the suite's namespaces.
func deleteCopyAfter(t *testing.T, ns, name string) {
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	})
}

// createAs creates rd as the author c and deletes it when the test ends.
func createAs(t *testing.T, c client.Client, rd *appsv1alpha1.ResourceDistribution) error {
	t.Helper()
	err := c.Create(context.Background(), rd)
	if err == nil {
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), rd) })
	}
	return err
}

// wantRefused checks err is a 403 whose message says every part of want.
func wantRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("admitted; want a 403 saying %q", want)
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("error %v, want 403 Forbidden", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
}

// TestADistributionCopiesABootstrapTokenIntoKubeSystemWithoutItsAuthorsRights: a user who may
// create ResourceDistributions but no Secret outside their own namespace writes a bootstrap
// token into kube-system with the manager's rights, as in 1.8. With
// --resourcedistribution-check-author-rights the webhook asks the apiserver for the author's own
// rights wherever the copies go, and refuses with 403 naming the namespace and the right.
func TestADistributionCopiesABootstrapTokenIntoKubeSystemWithoutItsAuthorsRights(t *testing.T) {
	own := framework.NewNamespace(t, env.Client, "rd-own-", nil)
	other := framework.NewNamespace(t, env.Client, "rd-other-", nil)

	t.Run("by default as in 1.8 the token reaches kube-system", func(t *testing.T) {
		useManager(t, true)
		_, author := distributor(t, own)
		rd := kinds.ResourceDistribution(uniqueName(t)).Resource(bootstrapToken("abc123")).Include("kube-system").Obj()
		deleteCopyAfter(t, "kube-system", "bootstrap-token-abc123")
		if err := createAs(t, author, rd); err != nil {
			t.Fatalf("refused: %v; 1.8 admits it", err)
		}
		hasSecret(t, rd, "kube-system", "bootstrap-token-abc123")
	})

	t.Run("with checkAuthorRights the same spec is refused naming kube-system and the right", func(t *testing.T) {
		useManagerWith(t, settings{gateOn: true, checkAuthorRights: true})
		user, author := distributor(t, own)
		rd := kinds.ResourceDistribution(uniqueName(t)).Resource(bootstrapToken("def456")).Include("kube-system").Obj()
		deleteCopyAfter(t, "kube-system", "bootstrap-token-def456")
		wantRefused(t, createAs(t, author, rd), "spec.targets.includedNamespaces.list[0].name",
			fmt.Sprintf("user %q may not create or update secrets in namespace \"kube-system\"", user), "--resourcedistribution-check-author-rights")
		if s, err := secretIn(context.Background(), "kube-system", "bootstrap-token-def456"); err != nil || s != nil {
			t.Errorf("kube-system holds the token (%v)", err)
		}
	})

	t.Run("with checkAuthorRights a namespace the author may write is admitted and one they may not is named", func(t *testing.T) {
		useManagerWith(t, settings{gateOn: true, checkAuthorRights: true})
		_, author := distributor(t, own)
		refused := kinds.ResourceDistribution(uniqueName(t)+"-both").Secret("pull", map[string]string{"k": "v"}).Include(own, other).Obj()
		wantRefused(t, createAs(t, author, refused), "spec.targets.includedNamespaces.list[1].name", fmt.Sprintf("in namespace %q", other))

		rd := kinds.ResourceDistribution(uniqueName(t)).Secret("pull", map[string]string{"k": "v"}).Include(own).Obj()
		if err := createAs(t, author, rd); err != nil {
			t.Fatalf("an author who may write Secrets in %s was refused: %v", own, err)
		}
		hasSecret(t, rd, own, "pull")
	})

	t.Run("with checkAuthorRights allNamespaces needs the rights cluster-wide", func(t *testing.T) {
		useManagerWith(t, settings{gateOn: true, checkAuthorRights: true})
		_, author := distributor(t, own)
		rd := kinds.ResourceDistribution(uniqueName(t)).Secret("pull", map[string]string{"k": "v"}).AllNamespaces().Obj()
		wantRefused(t, createAs(t, author, rd), "spec.targets.allNamespaces", "in every namespace (cluster-wide)")
	})
}

// TestExcludedNamespacesNeverReceiveCopies: with --resourcedistribution-excluded-namespaces a
// spec naming an excluded namespace is refused, and a ResourceDistribution admitted before the
// setting loses its copy there while keeping the others.
func TestExcludedNamespacesNeverReceiveCopies(t *testing.T) {
	a := framework.NewNamespace(t, env.Client, "rd-excl-", nil)
	useManager(t, true)
	before := kinds.ResourceDistribution(uniqueName(t)).Secret("shared", map[string]string{"k": "v"}).Include(a, "kube-system").Obj()
	deleteCopyAfter(t, "kube-system", "shared")
	framework.CreateForTest(t, env.Client, before)
	hasSecret(t, before, "kube-system", "shared")
	hasSecret(t, before, a, "shared")

	useManagerWith(t, settings{gateOn: true, excluded: "kube-system,kube-public,kube-node-lease"})
	framework.Eventually(t, framework.Medium, "the copy in kube-system deleted", func(ctx context.Context) error {
		s, err := secretIn(ctx, "kube-system", "shared")
		if err != nil {
			return err
		}
		return framework.Want(s == nil, "the copy is still in kube-system")
	})
	hasSecret(t, before, a, "shared")

	rd := kinds.ResourceDistribution(uniqueName(t)+"-new").Secret("other", map[string]string{"k": "v"}).Include(a, "kube-public").Obj()
	err := env.Client.Create(context.Background(), rd)
	if err == nil {
		_ = env.Client.Delete(context.Background(), rd)
	}
	wantRefused(t, err, "spec.targets.includedNamespaces.list[1].name", `namespace "kube-public" never receives copies`, "--resourcedistribution-excluded-namespaces")
}

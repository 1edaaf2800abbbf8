package framework

import (
	"context"
	"fmt"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Grant gives user the rules in namespace, or cluster-wide when namespace is "", through a Role
// or ClusterRole and its binding, both named name and deleted when the test ends. It returns
// once the apiserver's authorizer, which reads RBAC from its own cache, allows every verb of
// every rule.
func Grant(t testing.TB, c client.Client, user, namespace, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace}
	objs := []client.Object{
		&rbacv1.Role{ObjectMeta: meta, Rules: rules},
		&rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}},
	}
	if namespace == "" {
		objs = []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules},
			&rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
		}
	}
	for _, obj := range objs {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatalf("grant %s its rights: create %T %s: %v", user, obj, name, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
	Eventually(t, Short, "the authorizer allows "+user+" what "+name+" grants", func(ctx context.Context) error {
		for _, r := range rules {
			for _, verb := range r.Verbs {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: r.APIGroups[0], Resource: r.Resources[0]},
				}}
				if err := c.Create(ctx, sar); err != nil {
					return err
				}
				if !sar.Status.Allowed {
					return fmt.Errorf("%s may not %s %s yet", user, verb, r.Resources[0])
				}
			}
		}
		return nil
	})
}

// ClientAs returns a client that acts as user, through impersonation by the admin identity.
func (e *Env) ClientAs(t testing.TB, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatalf("client as %s: %v", user, err)
	}
	return c
}

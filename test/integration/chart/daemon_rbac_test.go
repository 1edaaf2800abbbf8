package chart

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// rbacPropagationTimeout bounds how long the apiserver's authorizer takes to see new bindings.
const rbacPropagationTimeout = framework.Medium

// The daemon's RBAC is rendered into namespaces of its own, and its cluster-wide objects get a
// suffix, so that the test never meets the release the plain-helm test installs.
const (
	daemonRBACNamespace       = "daemon-rbac"
	daemonRBACConfigNamespace = "daemon-rbac-config"
	daemonRBACSuffix          = "-rbac-test"
)

// applyDaemonRBAC creates the chart's daemon ServiceAccount, roles and bindings and returns a
// client that acts as that ServiceAccount.
func applyDaemonRBAC(t *testing.T) client.Client {
	t.Helper()
	ctx := t.Context()
	r := mustRender(t, values("installation.namespace", daemonRBACNamespace, "daemon.configNamespace", daemonRBACConfigNamespace), inNamespace(daemonRBACNamespace))
	for _, ns := range []string{daemonRBACNamespace, daemonRBACConfigNamespace} {
		if err := env.Client.Create(ctx, builder.Namespace(ns).Obj()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
	}
	var objs []client.Object
	if sa := find[*corev1.ServiceAccount](r.objects, "kruise-daemon"); sa != nil {
		objs = append(objs, sa)
	}
	for _, cr := range all[*rbacv1.ClusterRole](r.objects) {
		if cr.Name == "kruise-daemon-role" {
			cr.Name += daemonRBACSuffix
			objs = append(objs, cr)
		}
	}
	for _, b := range all[*rbacv1.ClusterRoleBinding](r.objects) {
		if b.RoleRef.Name == "kruise-daemon-role" {
			b.Name += daemonRBACSuffix
			b.RoleRef.Name += daemonRBACSuffix
			objs = append(objs, b)
		}
	}
	for _, ro := range all[*rbacv1.Role](r.objects) {
		if ro.Name == "kruise-daemon-secret-role" {
			objs = append(objs, ro)
		}
	}
	for _, b := range all[*rbacv1.RoleBinding](r.objects) {
		if b.RoleRef.Name == "kruise-daemon-secret-role" {
			objs = append(objs, b)
		}
	}
	if len(objs) != 5 {
		t.Fatalf("the chart renders %d daemon RBAC objects, want the ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding", len(objs))
	}
	for _, o := range objs {
		o.SetResourceVersion("")
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
		t.Cleanup(func() {
			if err := env.Client.Delete(context.WithoutCancel(ctx), o); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %T %s: %v", o, o.GetName(), err)
			}
		})
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:kruise-daemon", daemonRBACNamespace)}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDaemonRBAC acts as the daemon's ServiceAccount against the apiserver: what the daemon's
// code does is allowed, and changing a pod, reading Secrets elsewhere or writing the objects the
// manager owns is denied.
func TestDaemonRBAC(t *testing.T) {
	ctx := t.Context()
	daemon := applyDaemonRBAC(t)

	victim := builder.Pod("victim", "kube-system").Node("node-a").Obj()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-pull", Namespace: "kube-system"}}
	pullCopy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-pull", Namespace: daemonRBACConfigNamespace}}
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "recreate", Namespace: "kube-system"},
		Spec:       appsv1alpha1.ContainerRecreateRequestSpec{PodName: "victim", Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "main"}}},
	}
	for _, o := range []client.Object{victim, secret, pullCopy, ni, npp, crr} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
		t.Cleanup(func() {
			if err := env.Client.Delete(context.WithoutCancel(ctx), o, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %T %s: %v", o, o.GetName(), err)
			}
		})
	}
	podKey := client.ObjectKeyFromObject(victim)
	patch := func(body string) client.Patch { return client.RawPatch(types.MergePatchType, []byte(body)) }
	metaPatch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"{\"containers\":[]}"}}}`, appspub.RuntimeContainerMetaKey)

	// The authorizer sees the new bindings a little later.
	framework.Eventually(t, rbacPropagationTimeout, "the daemon's ServiceAccount reads pods", func(ctx context.Context) error {
		return daemon.Get(ctx, podKey, &corev1.Pod{})
	})

	cases := []struct {
		name    string
		do      func(ctx context.Context) error
		allowed bool
	}{
		{"it lists pods in every namespace", func(ctx context.Context) error { return daemon.List(ctx, &corev1.PodList{}) }, true},
		{"it writes runtime-containers-meta through pods/status", func(ctx context.Context) error {
			return daemon.Status().Patch(ctx, victim.DeepCopy(), patch(metaPatch))
		}, true},
		{"it cannot patch a kube-system pod's image", func(ctx context.Context) error {
			return daemon.Patch(ctx, victim.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"main","image":"evil:latest"}]}}`)))
		}, false},
		{"it cannot patch a pod's metadata outside status", func(ctx context.Context) error {
			return daemon.Patch(ctx, victim.DeepCopy(), patch(metaPatch))
		}, false},
		{"it cannot update a pod", func(ctx context.Context) error {
			p := &corev1.Pod{}
			if err := env.Client.Get(ctx, podKey, p); err != nil {
				return err
			}
			p.Spec.Containers[0].Image = "evil:latest"
			return daemon.Update(ctx, p)
		}, false},
		{"it cannot create pods", func(ctx context.Context) error {
			return daemon.Create(ctx, builder.Pod("evil", "kube-system").Obj())
		}, false},
		{"it cannot delete pods", func(ctx context.Context) error { return daemon.Delete(ctx, victim.DeepCopy()) }, false},
		{"it cannot get a Secret outside the config namespace", func(ctx context.Context) error {
			return daemon.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
		}, false},
		{"it cannot list Secrets outside the config namespace", func(ctx context.Context) error {
			return daemon.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system"))
		}, false},
		{"it gets a pull secret in the config namespace by name", func(ctx context.Context) error {
			return daemon.Get(ctx, client.ObjectKeyFromObject(pullCopy), &corev1.Secret{})
		}, true},
		{"it lists the config namespace's Secrets (its cache of the pull secrets)", func(ctx context.Context) error {
			return daemon.List(ctx, &corev1.SecretList{}, client.InNamespace(daemonRBACConfigNamespace))
		}, true},
		{"it reads its NodeImage", func(ctx context.Context) error {
			return daemon.Get(ctx, client.ObjectKeyFromObject(ni), &appsv1alpha1.NodeImage{})
		}, true},
		{"it writes NodeImage status", func(ctx context.Context) error {
			return daemon.Status().Patch(ctx, ni.DeepCopy(), patch(`{"status":{"desired":1}}`))
		}, true},
		{"it cannot change a NodeImage, only its status", func(ctx context.Context) error {
			return daemon.Patch(ctx, ni.DeepCopy(), patch(`{"metadata":{"labels":{"evil":"true"}}}`))
		}, false},
		{"it cannot delete a NodeImage", func(ctx context.Context) error { return daemon.Delete(ctx, ni.DeepCopy()) }, false},
		{"it lists NodePodProbes (its cache watches its own)", func(ctx context.Context) error {
			return daemon.List(ctx, &appsv1alpha1.NodePodProbeList{})
		}, true},
		{"it writes NodePodProbe status (the probe results)", func(ctx context.Context) error {
			return daemon.Status().Patch(ctx, npp.DeepCopy(), patch(`{"status":{"podProbeStatuses":[]}}`))
		}, true},
		{"it cannot change a NodePodProbe's probes, only their results", func(ctx context.Context) error {
			return daemon.Patch(ctx, npp.DeepCopy(), patch(`{"spec":{"podProbes":[]}}`))
		}, false},
		{"it cannot delete a NodePodProbe", func(ctx context.Context) error { return daemon.Delete(ctx, npp.DeepCopy()) }, false},
		{"it updates a ContainerRecreateRequest (statusContext)", func(ctx context.Context) error {
			c := &appsv1alpha1.ContainerRecreateRequest{}
			if err := daemon.Get(ctx, client.ObjectKeyFromObject(crr), c); err != nil {
				return err
			}
			c.Spec.Containers[0].StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://a"}
			return daemon.Update(ctx, c)
		}, true},
		{"it writes ContainerRecreateRequest status", func(ctx context.Context) error {
			return daemon.Status().Patch(ctx, crr.DeepCopy(), patch(`{"status":{"phase":"Recreating"}}`))
		}, true},
		{"it cannot create ContainerRecreateRequests", func(ctx context.Context) error {
			c := crr.DeepCopy()
			c.Name, c.ResourceVersion = "evil", ""
			return daemon.Create(ctx, c)
		}, false},
		{"it cannot delete ContainerRecreateRequests", func(ctx context.Context) error { return daemon.Delete(ctx, crr.DeepCopy()) }, false},
		{"it cannot patch nodes", func(ctx context.Context) error {
			return daemon.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, patch(`{"metadata":{"labels":{"evil":"true"}}}`))
		}, false},
		{"it creates events (those of finished image pulls)", func(ctx context.Context) error {
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-a.", Namespace: "default"}, InvolvedObject: corev1.ObjectReference{Kind: "NodeImage", Name: "node-a"},
				Reason: "PullImageSucceed", Type: corev1.EventTypeNormal}
			if err := daemon.Create(ctx, ev); err != nil {
				return err
			}
			return env.Client.Delete(ctx, ev)
		}, true},
		{"it cannot delete events", func(ctx context.Context) error {
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-a.", Namespace: "default"}, InvolvedObject: corev1.ObjectReference{Kind: "NodeImage", Name: "node-a"}}
			if err := env.Client.Create(ctx, ev); err != nil {
				return err
			}
			defer func() { _ = env.Client.Delete(context.WithoutCancel(ctx), ev) }()
			return daemon.Delete(ctx, ev.DeepCopy())
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(ctx)
			switch {
			case tc.allowed && err != nil:
				t.Errorf("want allowed, got %v", err)
			case !tc.allowed && !apierrors.IsForbidden(err):
				t.Errorf("want forbidden, got %v", err)
			}
		})
	}

	// The annotation written through pods/status is on the pod, and its spec is untouched.
	got := &corev1.Pod{}
	if err := env.Client.Get(ctx, podKey, got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[appspub.RuntimeContainerMetaKey] == "" {
		t.Errorf("pods/status did not keep the %s annotation: %v", appspub.RuntimeContainerMetaKey, got.Annotations)
	}
	if img := got.Spec.Containers[0].Image; img != builder.DefaultImage {
		t.Errorf("pod image %q, want %q unchanged", img, builder.DefaultImage)
	}
}

package daemon

import (
	"context"
	"fmt"
	"path/filepath"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kdaemon "github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// daemonNamespace is where the chart puts the daemon's ServiceAccount.
const daemonNamespace = "kruise-system"

// rbacPropagationTimeout bounds how long the apiserver's authorizer takes to see new bindings.
const rbacPropagationTimeout = framework.Medium

// chartDaemonConfig creates the chart's daemon ServiceAccount, roles and bindings, rendered from
// charts/kruise, and returns a config that acts as that ServiceAccount: the suite's daemons run
// with exactly the rights a real installation gives them.
func chartDaemonConfig(ctx context.Context) (*rest.Config, error) {
	ch, err := loader.Load(filepath.Join(repoRoot, "charts", "kruise"))
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	kv, err := chartutil.ParseKubeVersion("v1.37.2")
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ClientOnly, install.DryRun, install.Replace = true, true, true
	install.ReleaseName, install.Namespace, install.KubeVersion = "kruise", daemonNamespace, kv
	rel, err := install.Run(ch, map[string]any{
		"installation":  map[string]any{"namespace": daemonNamespace},
		"imageRegistry": "registry.example.com", // the chart names none; only the RBAC is used here
		"daemon":        map[string]any{"configNamespace": kdaemon.ConfigNamespace},
	})
	if err != nil {
		return nil, fmt.Errorf("render chart: %w", err)
	}
	dec := serializer.NewCodecFactory(clientgoscheme.Scheme).UniversalDeserializer()
	var objs []client.Object
	for _, doc := range releaseutil.SplitManifests(rel.Manifest) {
		obj, _, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			continue // the CRDs; the daemon's RBAC is all core and rbac kinds
		}
		if o, ok := obj.(client.Object); ok && daemonRBAC(o) {
			objs = append(objs, o)
		}
	}
	if len(objs) != 5 {
		return nil, fmt.Errorf("the chart renders %d daemon RBAC objects, want 5", len(objs))
	}
	if err := env.Client.Create(ctx, builder.Namespace(daemonNamespace).Obj()); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create %s: %w", daemonNamespace, err)
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			return nil, fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:kruise-daemon", daemonNamespace)}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	// The authorizer sees the new bindings a little later.
	if err := framework.PollUntil(ctx, rbacPropagationTimeout, func(ctx context.Context) error {
		return c.List(ctx, &corev1.PodList{}, client.Limit(1))
	}); err != nil {
		return nil, fmt.Errorf("the daemon's ServiceAccount cannot list pods: %w", err)
	}
	return cfg, nil
}

// daemonRBAC reports whether obj is one of the chart's five objects that make up the daemon's
// identity and permissions.
func daemonRBAC(obj client.Object) bool {
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		return o.Name == "kruise-daemon"
	case *rbacv1.ClusterRole:
		return o.Name == "kruise-daemon-role"
	case *rbacv1.ClusterRoleBinding:
		return o.RoleRef.Name == "kruise-daemon-role"
	case *rbacv1.Role:
		return o.Name == "kruise-daemon-secret-role"
	case *rbacv1.RoleBinding:
		return o.RoleRef.Name == "kruise-daemon-secret-role"
	}
	return false
}

package chart

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"fmt"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/uninstallgate"
)

func TestEveryValuesFileRendersTheContractObjects(t *testing.T) {
	cases := map[string]map[string]any{"the defaults": nil}
	for _, f := range ciValuesFiles(t) {
		cases["ci/"+filepath.Base(f)] = readValues(t, f)
	}
	if len(cases) < 6 {
		t.Fatalf("want the defaults and at least 5 ci values files, have %d cases", len(cases))
	}
	for name, vals := range cases {
		t.Run(name, func(t *testing.T) {
			r := mustRender(t, vals)
			var missing []string
			for _, want := range []struct {
				found bool
				name  string
			}{
				{find[*appsv1.Deployment](r.objects, "kruise-controller-manager") != nil, "Deployment kruise-controller-manager"},
				{find[*corev1.Service](r.objects, "kruise-webhook-service") != nil, "Service kruise-webhook-service"},
				{find[*corev1.Secret](r.objects, "kruise-webhook-certs") != nil, "Secret kruise-webhook-certs"},
				{find[*corev1.ServiceAccount](r.objects, "kruise-manager") != nil, "ServiceAccount kruise-manager"},
				{find[*admissionregistrationv1.MutatingWebhookConfiguration](r.objects, "kruise-mutating-webhook-configuration") != nil, "kruise-mutating-webhook-configuration"},
				{find[*admissionregistrationv1.ValidatingWebhookConfiguration](r.objects, "kruise-validating-webhook-configuration") != nil, "kruise-validating-webhook-configuration"},
				{find[*batchv1.Job](r.hooks, "kruise-uninstall-check") != nil, "hook Job kruise-uninstall-check"},
			} {
				if !want.found {
					missing = append(missing, want.name)
				}
			}
			if len(missing) > 0 {
				t.Errorf("missing objects: %v", missing)
			}
			if got := len(all[*apiextensionsv1.CustomResourceDefinition](r.objects)); got != 18 {
				t.Errorf("CRDs: got %d, want 18", got)
			}
			for _, o := range append(append([]any{}, objectsOf(r.objects)...), objectsOf(r.hooks)...) {
				obj := o.(interface{ GetNamespace() string })
				if ns := obj.GetNamespace(); ns != "" && ns != "kruise-system" && ns != "kruise-daemon-config" {
					t.Errorf("%T in namespace %q, want kruise-system", o, ns)
				}
			}
		})
	}
}

func objectsOf[T any](objs []T) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

func TestChartVersionIsTheCurrentAddonVersion(t *testing.T) {
	c := loadChart(t)
	want := currentAddon(t)
	if d := cmp.Diff([]string{want, want}, []string{c.Metadata.Version, c.Metadata.AppVersion}); d != "" {
		t.Errorf("Chart.yaml version and appVersion (-want +got):\n%s", d)
	}
	img := find[*appsv1.Deployment](mustRender(t, nil).objects, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Image
	if !strings.HasSuffix(img, ":"+want) {
		t.Errorf("manager image %q: an empty tag must render the appVersion %s", img, want)
	}
}

func TestNamespace(t *testing.T) {
	cases := []struct {
		name      string
		releaseNS string
		vals      map[string]any
		wantNS    bool
	}{
		{"a release in another namespace creates kruise-system with our label", "default", nil, true},
		{"a release in kruise-system leaves the namespace to helm (it must exist first)", "kruise-system", nil, false},
		{"createNamespace false creates nothing", "default", values("installation.createNamespace", false), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.vals, inNamespace(tc.releaseNS))
			ns := find[*corev1.Namespace](r.objects, "kruise-system")
			if (ns != nil) != tc.wantNS {
				t.Fatalf("namespace kruise-system rendered: %v, want %v", ns != nil, tc.wantNS)
			}
			if ns != nil && ns.Labels["control-plane"] != "openkruise" {
				t.Errorf("namespace labels %v lack control-plane: openkruise", ns.Labels)
			}
		})
	}
}

func TestCRDsAreTheGeneratedFilesWithTheKeepPolicy(t *testing.T) {
	files := generatedCRDs(t)
	r := mustRender(t, nil)
	got := all[*apiextensionsv1.CustomResourceDefinition](r.objects)
	if len(got) != 18 || len(files) != 18 {
		t.Fatalf("CRDs: rendered %d, generated %d, want 18 each", len(got), len(files))
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range got {
		byName[c.Name] = c
		if c.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s: annotations %v lack helm.sh/resource-policy: keep", c.Name, c.Annotations)
		}
	}
	for _, f := range files {
		c, ok := byName[f.Name]
		if !ok {
			t.Errorf("CRD %s is generated but not rendered", f.Name)
			continue
		}
		if d := cmp.Diff(f.Spec, c.Spec); d != "" {
			t.Errorf("CRD %s spec differs from the generated file (-file +rendered):\n%s", f.Name, d)
		}
	}
	if n := len(all[*apiextensionsv1.CustomResourceDefinition](mustRender(t, values("crds.managed", false)).objects)); n != 0 {
		t.Errorf("crds.managed=false rendered %d CRDs, want 0", n)
	}
}

func managerPod(t *testing.T, vals map[string]any) corev1.PodSpec {
	t.Helper()
	d := find[*appsv1.Deployment](mustRender(t, vals).objects, "kruise-controller-manager")
	if d == nil {
		t.Fatal("no manager Deployment")
	}
	return d.Spec.Template.Spec
}

func TestManagerSecurity(t *testing.T) {
	pod := managerPod(t, nil)
	c := pod.Containers[0]
	wantSC := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if d := cmp.Diff(wantSC, c.SecurityContext); d != "" {
		t.Errorf("container security context (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}, pod.SecurityContext); d != "" {
		t.Errorf("pod security context (-want +got):\n%s", d)
	}
	var tmp []string
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil {
				tmp = append(tmp, m.MountPath)
			}
		}
	}
	if d := cmp.Diff([]string{"/tmp"}, tmp); d != "" {
		t.Errorf("emptyDir mounts (-want +got):\n%s", d)
	}
	hook := find[*batchv1.Job](mustRender(t, nil).hooks, "kruise-uninstall-check")
	if d := cmp.Diff(wantSC, hook.Spec.Template.Spec.Containers[0].SecurityContext); d != "" {
		t.Errorf("hook container security context (-want +got):\n%s", d)
	}
}

func TestManagerContainer(t *testing.T) {
	pod := managerPod(t, values("manager.workers", map[string]any{"cloneset": 7, "imagepulljob": 2},
		"featureGates", "PodWebhook=true", "manager.extraArgs", []any{"--sync-period=10m"}))
	c := pod.Containers[0]
	wantArgs := []string{
		"--enable-leader-election=true",
		"--leader-election-namespace=kruise-system",
		"--leader-election-lease-duration=15s",
		"--leader-election-renew-deadline=10s",
		"--leader-election-retry-period=1s",
		"--metrics-addr=:8080",
		"--health-probe-addr=:8000",
		"--webhook-port=9876",
		"--webhook-cert-dir=/tmp/kruise-webhook-certs",
		"--daemon-config-namespace=kruise-daemon-config",
		"--feature-gates=PodWebhook=true,ImagePullJobGate=true",
		"--cloneset-workers=7",
		"--imagepulljob-workers=2",
		"-v=4",
		"--sync-period=10m",
	}
	if d := cmp.Diff(wantArgs, c.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"/kruise-manager"}, c.Command); d != "" {
		t.Errorf("command (-want +got):\n%s", d)
	}
	if len(c.Env) != 4 || c.Env[0].Name != "POD_NAMESPACE" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.namespace" ||
		c.Env[1].Name != "POD_NAME" || c.Env[1].ValueFrom.FieldRef == nil || c.Env[1].ValueFrom.FieldRef.FieldPath != "metadata.name" ||
		c.Env[2].Name != "GOMEMLIMIT" || c.Env[2].ValueFrom.ResourceFieldRef == nil ||
		c.Env[2].ValueFrom.ResourceFieldRef.Resource != "limits.memory" || c.Env[2].ValueFrom.ResourceFieldRef.ContainerName != "manager" ||
		c.Env[3].Name != "GOGC" || c.Env[3].Value != "50" {
		t.Errorf("env %+v, want POD_NAMESPACE from metadata.namespace, POD_NAME from metadata.name (the Lease identity), GOMEMLIMIT from the manager's memory limit and GOGC 50", c.Env)
	}
	probes := []string{c.ReadinessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Port.String(), c.LivenessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Port.String()}
	if d := cmp.Diff([]string{"/readyz", "health", "/healthz", "health"}, probes); d != "" {
		t.Errorf("probes (-want +got):\n%s", d)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if d := cmp.Diff(map[string]int32{"webhook": 9876, "metrics": 8080, "health": 8000}, ports); d != "" {
		t.Errorf("ports (-want +got):\n%s", d)
	}
	if d := cmp.Diff(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("100m"), corev1.ResourceMemory: mustQuantity("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: mustQuantity("1"), corev1.ResourceMemory: mustQuantity("1Gi")},
	}, c.Resources, quantityCmp); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
}

// TestLeaderElectionTimingReachesTheManager: the chart's lease timing is what the manager runs
// with, by default and when a platform sets its own.
func TestLeaderElectionTimingReachesTheManager(t *testing.T) {
	cases := map[string]struct {
		vals map[string]any
		want []string
	}{
		"the defaults release a standby within a second after a graceful stop and wait out 15 s after a crash": {
			want: []string{"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=1s"},
		},
		"a platform's own timing is passed as it is": {
			vals: values("manager.leaderElectionTiming", map[string]any{"leaseDuration": "30s", "renewDeadline": "20s", "retryPeriod": "4s"}),
			want: []string{"--leader-election-lease-duration=30s", "--leader-election-renew-deadline=20s", "--leader-election-retry-period=4s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, a := range managerPod(t, tc.vals).Containers[0].Args {
				if strings.HasPrefix(a, "--leader-election-") && !strings.HasPrefix(a, "--leader-election-namespace") {
					got = append(got, a)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("leader-election flags (-want +got):\n%s", d)
			}
		})
	}
}

// TestHazardValuesReachTheManager: the values that close two hazards OpenKruise 1.8 keeps
// render the manager's flags, and the author check the one right it needs; by default the
// manager runs as 1.8 does and gets neither.
func TestHazardValuesReachTheManager(t *testing.T) {
	cases := map[string]struct {
		vals     map[string]any
		wantArgs []string
		wantSAR  bool
	}{
		"by default the manager behaves as 1.8 and may not ask for access reviews": {},
		"resourceDistribution.checkAuthorRights passes its flag and lets the manager ask for access reviews": {
			vals:     values("resourceDistribution.checkAuthorRights", true),
			wantArgs: []string{"--resourcedistribution-check-author-rights=true"},
			wantSAR:  true,
		},
		"resourceDistribution.excludedNamespaces passes the namespaces as one flag": {
			vals:     values("resourceDistribution.excludedNamespaces", []any{"kube-system", "kube-public", "kube-node-lease"}),
			wantArgs: []string{"--resourcedistribution-excluded-namespaces=kube-system,kube-public,kube-node-lease"},
		},
		"deletionProtection.allowInTerminatingNamespace passes its flag": {
			vals:     values("deletionProtection.allowInTerminatingNamespace", true),
			wantArgs: []string{"--deletion-protection-allow-in-terminating-namespace=true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := mustRender(t, tc.vals)
			var got []string
			for _, a := range find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Args {
				if strings.HasPrefix(a, "--resourcedistribution-") || strings.HasPrefix(a, "--deletion-protection-") {
					got = append(got, a)
				}
			}
			if d := cmp.Diff(tc.wantArgs, got); d != "" {
				t.Errorf("hazard flags (-want +got):\n%s", d)
			}
			sar := false
			for _, rule := range find[*rbacv1.ClusterRole](r.objects, "kruise-manager-role").Rules {
				sar = sar || sets.New(rule.APIGroups...).Has("authorization.k8s.io") && sets.New(rule.Resources...).Has("subjectaccessreviews") && sets.New(rule.Verbs...).Has("create")
			}
			if sar != tc.wantSAR {
				t.Errorf("the ClusterRole allows creating subjectaccessreviews: %v, want %v", sar, tc.wantSAR)
			}
		})
	}
}

func TestManagerPlacement(t *testing.T) {
	notReady := func(s int64) []corev1.Toleration {
		return []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(s)},
			{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(s)},
		}
	}
	user := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name            string
		vals            map[string]any
		wantTolerations []corev1.Toleration
		wantHostNetwork bool
		wantDNSPolicy   corev1.DNSPolicy
		wantSurge       string // maxSurge/maxUnavailable
	}{
		{"the defaults tolerate not-ready and unreachable for 60s", nil, notReady(60), false, "", "1/0"},
		{"the user's tolerations come after the two defaults", values("manager.tolerations", []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule"}}),
			append(notReady(60), user), false, "", "1/0"},
		{"defaultTolerationSeconds sets both", values("manager.defaultTolerationSeconds", 15), notReady(15), false, "", "1/0"},
		{"host network brings ClusterFirstWithHostNet and rolls without a surge", values("manager.hostNetwork", true), notReady(60), true, corev1.DNSClusterFirstWithHostNet, "0/1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := find[*appsv1.Deployment](mustRender(t, tc.vals).objects, "kruise-controller-manager")
			pod := d.Spec.Template.Spec
			if diff := cmp.Diff(tc.wantTolerations, pod.Tolerations); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
			ru := d.Spec.Strategy.RollingUpdate
			got := []any{pod.HostNetwork, pod.DNSPolicy, ru.MaxSurge.String() + "/" + ru.MaxUnavailable.String()}
			if diff := cmp.Diff([]any{tc.wantHostNetwork, tc.wantDNSPolicy, tc.wantSurge}, got); diff != "" {
				t.Errorf("hostNetwork, dnsPolicy, maxSurge/maxUnavailable (-want +got):\n%s", diff)
			}
		})
	}

	large := mustRender(t, readValues(t, filepath.Join(chartDir(t), "ci", "large-values.yaml")))
	d := find[*appsv1.Deployment](large.objects, "kruise-controller-manager")
	pdb := find[*policyv1.PodDisruptionBudget](large.objects, "kruise-controller-manager")
	if pdb == nil {
		t.Fatal("large: no PodDisruptionBudget")
	}
	got := []any{*d.Spec.Replicas, pdb.Spec.MinAvailable.IntValue(), pdb.Spec.Selector.MatchLabels, d.Spec.Template.Spec.Affinity.PodAntiAffinity != nil, len(d.Spec.Template.Spec.TopologySpreadConstraints)}
	if diff := cmp.Diff([]any{int32(3), 2, map[string]string{"control-plane": "controller-manager"}, true, 1}, got); diff != "" {
		t.Errorf("large: replicas, PDB minAvailable, PDB selector, anti-affinity, spread (-want +got):\n%s", diff)
	}
	if find[*policyv1.PodDisruptionBudget](mustRender(t, nil).objects, "kruise-controller-manager") != nil {
		t.Error("the defaults render a PodDisruptionBudget; it is off by default")
	}
}

func TestDaemonOnAndOff(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want bool
	}{
		{"the daemon is on by default", nil, true},
		{"daemon.enabled false turns it off", values("daemon.enabled", false), false},
		{"the KruiseDaemon=false gate turns it off", values("featureGates", "KruiseDaemon=false"), false},
		{"the gate among others, spaced and capitalised, turns it off", values("featureGates", "PodWebhook=true, KruiseDaemon=False"), false},
		{"KruiseDaemon=true keeps it on", values("featureGates", "KruiseDaemon=true,PodWebhook=false"), true},
		{"another gate set to false keeps it on", values("featureGates", "DaemonWatchingPod=false"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.vals)
			got := []bool{
				find[*appsv1.DaemonSet](r.objects, "kruise-daemon") != nil,
				find[*corev1.ServiceAccount](r.objects, "kruise-daemon") != nil,
				find[*rbacv1.ClusterRole](r.objects, "kruise-daemon-role") != nil,
			}
			if d := cmp.Diff([]bool{tc.want, tc.want, tc.want}, got); d != "" {
				t.Errorf("DaemonSet, ServiceAccount, ClusterRole rendered (-want +got):\n%s", d)
			}
		})
	}
}

func TestDaemonPod(t *testing.T) {
	r := mustRender(t, values("daemon.socketLocation", "/run/k3s", "daemon.socketFile", "containerd/containerd.sock", "featureGates", "ImagePullJobGate=true"))
	ds := find[*appsv1.DaemonSet](r.objects, "kruise-daemon")
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	if d := cmp.Diff([]corev1.Toleration{{Operator: corev1.TolerationOpExists}}, pod.Tolerations); d != "" {
		t.Errorf("tolerations (-want +got):\n%s", d)
	}
	if !pod.HostNetwork {
		t.Error("the daemon must use the host network")
	}
	var hostPath, mountedAt string
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			hostPath = v.HostPath.Path
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					mountedAt = m.MountPath
				}
			}
		}
	}
	if d := cmp.Diff([]string{"/run/k3s", "/hostvarrun"}, []string{hostPath, mountedAt}); d != "" {
		t.Errorf("socket host path and mount (-want +got):\n%s", d)
	}
	wantArgs := []string{"--hostvarrun=/hostvarrun", "--socket-file=containerd/containerd.sock", "--addr=:10221", "--feature-gates=ImagePullJobGate=true", "--max-workers-for-pull-image=2", "--daemon-config-namespace=kruise-daemon-config", "--enable-pprof=true", "-v=4"}
	if d := cmp.Diff(wantArgs, c.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "NODE_NAME" || c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("env %+v, want NODE_NAME from spec.nodeName", c.Env)
	}
	// Liveness asks the runtime only; readiness also waits for the daemon's cache.
	if c.LivenessProbe == nil || c.ReadinessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %+v, readiness %+v; want /healthz and /readyz", c.LivenessProbe, c.ReadinessProbe)
	}
}

func TestImagesAndRegistryOverride(t *testing.T) {
	images := func(r *rendered) []string {
		return []string{
			find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Image,
			find[*appsv1.DaemonSet](r.objects, "kruise-daemon").Spec.Template.Spec.Containers[0].Image,
			find[*batchv1.Job](r.hooks, "kruise-uninstall-check").Spec.Template.Spec.Containers[0].Image,
		}
	}
	cases := []struct {
		name string
		vals map[string]any
		want []string
	}{
		{"the defaults: the hook runs the manager image", nil, []string{
			"registry.example.com/kruise-addon/kruise-manager:1.2.0",
			"registry.example.com/kruise-addon/kruise-daemon:1.2.0",
			"registry.example.com/kruise-addon/kruise-manager:1.2.0",
		}},
		{"imageRegistry replaces the registry of all three images", values("imageRegistry", "mirror.example.com:5000/kruise"), []string{
			"mirror.example.com:5000/kruise/kruise-addon/kruise-manager:1.2.0",
			"mirror.example.com:5000/kruise/kruise-addon/kruise-daemon:1.2.0",
			"mirror.example.com:5000/kruise/kruise-addon/kruise-manager:1.2.0",
		}},
		{"tags and the hook's own image are honoured", values("manager.image.tag", "1.2.0-rc1", "daemon.image.tag", "dev",
			"hook.image.registry", "hooks.example.com", "hook.image.repository", "tools/gate", "hook.image.tag", "7"), []string{
			"registry.example.com/kruise-addon/kruise-manager:1.2.0-rc1",
			"registry.example.com/kruise-addon/kruise-daemon:dev",
			"hooks.example.com/tools/gate:7",
		}},
		{"imageRegistry overrides the hook's registry too", values("imageRegistry", "mirror.example.com", "hook.image.registry", "hooks.example.com"), []string{
			"mirror.example.com/kruise-addon/kruise-manager:1.2.0",
			"mirror.example.com/kruise-addon/kruise-daemon:1.2.0",
			"mirror.example.com/kruise-addon/kruise-manager:1.2.0",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, images(mustRender(t, tc.vals))); d != "" {
				t.Errorf("manager, daemon, hook images (-want +got):\n%s", d)
			}
		})
	}
	r := mustRender(t, values("imagePullSecrets", []any{map[string]any{"name": "pull"}}))
	for _, spec := range []corev1.PodSpec{
		find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec,
		find[*appsv1.DaemonSet](r.objects, "kruise-daemon").Spec.Template.Spec,
		find[*batchv1.Job](r.hooks, "kruise-uninstall-check").Spec.Template.Spec,
	} {
		if d := cmp.Diff([]corev1.LocalObjectReference{{Name: "pull"}}, spec.ImagePullSecrets); d != "" {
			t.Errorf("imagePullSecrets of %s (-want +got):\n%s", spec.ServiceAccountName, d)
		}
	}
}

func TestTheChartNamesNoRegistryAndFailsNamingImageRegistry(t *testing.T) {
	cases := map[string]struct {
		vals       map[string]any
		wantErr    string
		wantImages []string
	}{
		"the bare defaults fail naming imageRegistry and the image it must serve": {
			wantErr: "set imageRegistry (the registry that serves kruise-addon/kruise-manager:1.2.0), or install from a bundle (kruise-addon install --bundle",
		},
		"a registry for the manager only still fails, on the daemon's image": {
			vals:    values("manager.image.registry", "mirror.example.com"),
			wantErr: "set imageRegistry (the registry that serves kruise-addon/kruise-daemon:1.2.0)",
		},
		"imageRegistry alone renders every image from it": {
			vals: values("imageRegistry", "mirror.example.com"),
			wantImages: []string{"mirror.example.com/kruise-addon/kruise-manager:1.2.0", "mirror.example.com/kruise-addon/kruise-daemon:1.2.0",
				"mirror.example.com/kruise-addon/kruise-manager:1.2.0"},
		},
		"a registry host at the head of each repository is a registry": {
			vals: values("manager.image.repository", "mirror.example.com/kruise-manager", "daemon.image.repository", "localhost/kruise-daemon"),
			wantImages: []string{"mirror.example.com/kruise-manager:1.2.0", "localhost/kruise-daemon:1.2.0",
				"mirror.example.com/kruise-manager:1.2.0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := render(t, tc.vals, bareValues)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("render error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			got := []string{
				find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Image,
				find[*appsv1.DaemonSet](r.objects, "kruise-daemon").Spec.Template.Spec.Containers[0].Image,
				find[*batchv1.Job](r.hooks, "kruise-uninstall-check").Spec.Template.Spec.Containers[0].Image,
			}
			if d := cmp.Diff(tc.wantImages, got); d != "" {
				t.Errorf("manager, daemon, hook images (-want +got):\n%s", d)
			}
		})
	}
}

func TestUninstallHook(t *testing.T) {
	r := mustRender(t, nil)
	job := find[*batchv1.Job](r.hooks, "kruise-uninstall-check")
	if job == nil {
		t.Fatal("no hook Job")
	}
	if d := cmp.Diff(map[string]string{
		"helm.sh/hook":               "pre-delete",
		"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
		"helm.sh/hook-weight":        "0",
	}, job.Annotations); d != "" {
		t.Errorf("Job annotations (-want +got):\n%s", d)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if d := cmp.Diff([]string{"/kruise-manager", "uninstall-check"}, c.Command); d != "" {
		t.Errorf("hook command (-want +got):\n%s", d)
	}
	for _, o := range r.hooks {
		if o.GetAnnotations()["helm.sh/hook"] != "pre-delete" {
			t.Errorf("%T %s is in the hook set without the pre-delete annotation", o, o.GetName())
		}
	}
	for _, o := range r.objects {
		if strings.Contains(o.GetName(), "uninstall-check") {
			t.Errorf("%T %s is a release object; every uninstall-check object must be a hook", o, o.GetName())
		}
	}

	role := find[*rbacv1.ClusterRole](r.hooks, "kruise-uninstall-check")
	if role == nil {
		t.Fatal("no hook ClusterRole")
	}
	granted := sets.New[string]()
	for _, rule := range role.Rules {
		if d := cmp.Diff([]string{"list"}, rule.Verbs); d != "" {
			t.Errorf("hook rule verbs (-want +got):\n%s", d)
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				granted.Insert(res + "." + g)
			}
		}
	}
	want := sets.New[string]()
	for _, gvr := range uninstallgate.UserKinds() {
		want.Insert(gvr.Resource + "." + gvr.Group)
	}
	if d := cmp.Diff(sets.List(want), sets.List(granted)); d != "" {
		t.Errorf("hook may list exactly the gate's user kinds (-want +got):\n%s", d)
	}

	off := mustRender(t, values("hook.enabled", false))
	if len(off.hooks) != 0 {
		t.Errorf("hook.enabled=false still renders %d hook objects", len(off.hooks))
	}
}

func TestRBACHasNoWildcard(t *testing.T) {
	r := mustRender(t, nil)
	var rules []rbacv1.PolicyRule
	for _, cr := range all[*rbacv1.ClusterRole](append(r.objects, r.hooks...)) {
		rules = append(rules, cr.Rules...)
	}
	for _, ro := range all[*rbacv1.Role](r.objects) {
		rules = append(rules, ro.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("no RBAC rules rendered")
	}
	for _, rule := range rules {
		for _, f := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
			for _, v := range f {
				if strings.Contains(v, "*") {
					t.Errorf("rule %+v has a wildcard", rule)
				}
			}
		}
	}
}

func TestManagerRBAC(t *testing.T) {
	r := mustRender(t, nil)
	cr := find[*rbacv1.ClusterRole](r.objects, "kruise-manager-role")
	can := func(rules []rbacv1.PolicyRule, group, resource, verb, name string) bool {
		for _, rule := range rules {
			if sets.New(rule.APIGroups...).Has(group) && sets.New(rule.Resources...).Has(resource) && sets.New(rule.Verbs...).Has(verb) &&
				(len(rule.ResourceNames) == 0 || sets.New(rule.ResourceNames...).Has(name)) {
				return true
			}
		}
		return false
	}
	cases := []struct {
		name                  string
		group, resource, verb string
		object                string
		want                  bool
	}{
		{"it writes CloneSets", "apps.kruise.io", "clonesets", "update", "", true},
		{"it writes CloneSet status", "apps.kruise.io", "clonesets/status", "update", "", true},
		{"it sets CloneSet finalizers", "apps.kruise.io", "clonesets/finalizers", "update", "", true},
		{"it writes PodUnavailableBudget status", "policy.kruise.io", "podunavailablebudgets/status", "patch", "", true},
		{"it updates PodUnavailableBudget status from the controller and the pod webhook", "policy.kruise.io", "podunavailablebudgets/status", "update", "", true},
		{"it watches PodUnavailableBudgets", "policy.kruise.io", "podunavailablebudgets", "watch", "", true},
		{"it reads a budget's StatefulSet target", "apps", "statefulsets", "watch", "", true},
		{"it creates pods", "", "pods", "create", "", true},
		{"it writes pod status", "", "pods/status", "patch", "", true},
		{"it resizes pods' containers in place", "", "pods/resize", "patch", "", true},
		{"it creates PVCs", "", "persistentvolumeclaims", "create", "", true},
		{"it creates events", "", "events", "create", "", true},
		{"it writes controller revisions", "apps", "controllerrevisions", "create", "", true},
		{"it creates the StatefulSets of UnitedDeployments", "apps", "statefulsets", "create", "", true},
		{"it scales the Deployments of UnitedDeployments", "apps", "deployments", "update", "", true},
		{"it deletes the subset workloads of UnitedDeployments", "apps", "deployments", "delete", "", true},
		{"it writes UnitedDeployment status", "apps.kruise.io", "uniteddeployments/status", "update", "", true},
		{"it creates and prunes the Jobs of AdvancedCronJobs", "batch", "jobs", "delete", "", true},
		{"it creates the ImageListPullJobs of AdvancedCronJobs", "apps.kruise.io", "imagelistpulljobs", "create", "", true},
		{"it creates the BroadcastJobs of AdvancedCronJobs", "apps.kruise.io", "broadcastjobs", "create", "", true},
		{"it deletes finished BroadcastJobs after their TTL", "apps.kruise.io", "broadcastjobs", "delete", "", true},
		{"it writes BroadcastJob status", "apps.kruise.io", "broadcastjobs/status", "patch", "", true},
		{"it deletes finished EphemeralJobs after their TTL", "apps.kruise.io", "ephemeraljobs", "delete", "", true},
		{"it writes EphemeralJob status", "apps.kruise.io", "ephemeraljobs/status", "patch", "", true},
		{"it adds EphemeralJob containers to pods", "", "pods/ephemeralcontainers", "update", "", true},
		{"it writes AdvancedCronJob status", "apps.kruise.io", "advancedcronjobs/status", "patch", "", true},
		{"it completes and deletes ContainerRecreateRequests", "apps.kruise.io", "containerrecreaterequests", "delete", "", true},
		{"it writes ContainerRecreateRequest status", "apps.kruise.io", "containerrecreaterequests/status", "update", "", true},
		{"it follows a pod's ReplicaSet to its Deployment for WorkloadSpread", "apps", "replicasets", "watch", "", true},
		{"it reads a WorkloadSpread target's replicas", "apps", "deployments", "get", "", true},
		{"it writes WorkloadSpread status", "apps.kruise.io", "workloadspreads/status", "update", "", true},
		{"it has no wildcard right on custom workloads' scale: a ClusterRole the user binds grants it", "*", "*/scale", "get", "", false},
		{"it never scales a workload through the scale sub-resource", "*", "*/scale", "update", "", false},
		{"it reads nodes", "", "nodes", "watch", "", true},
		{"it does not write nodes", "", "nodes", "update", "", false},
		{"it reads whether a StorageClass allows volume expansion", "storage.k8s.io", "storageclasses", "watch", "", true},
		{"it does not write StorageClasses", "storage.k8s.io", "storageclasses", "update", "", false},
		{"it resizes PVCs", "", "persistentvolumeclaims", "update", "", true},
		{"it reads namespaces", "", "namespaces", "list", "", true},
		{"it patches our mutating configuration", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch", "kruise-mutating-webhook-configuration", true},
		{"it does not patch someone else's", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch", "other", false},
		{"it patches our CRDs", "apiextensions.k8s.io", "customresourcedefinitions", "patch", "clonesets.apps.kruise.io", true},
		{"it does not patch other CRDs", "apiextensions.k8s.io", "customresourcedefinitions", "patch", "certificates.cert-manager.io", false},
		{"it never deletes CRDs", "apiextensions.k8s.io", "customresourcedefinitions", "delete", "clonesets.apps.kruise.io", false},
		{"it creates and opens launch barrier ConfigMaps in any namespace", "", "configmaps", "patch", "", true},
		{"it cannot list ConfigMaps cluster-wide", "", "configmaps", "list", "", false},
		{"it cannot delete ConfigMaps cluster-wide", "", "configmaps", "delete", "", false},
		{"it gets ImagePullJob pull secrets by name in any namespace", "", "secrets", "get", "", true},
		{"it cannot list secrets cluster-wide", "", "secrets", "list", "", false},
		{"it cannot watch secrets cluster-wide", "", "secrets", "watch", "", false},
		{"it cannot write secrets cluster-wide", "", "secrets", "update", "", false},
		{"with ResourceDistributionGate off (1.8's default) it cannot delete secrets cluster-wide", "", "secrets", "delete", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := can(cr.Rules, tc.group, tc.resource, tc.verb, tc.object); got != tc.want {
				t.Errorf("ClusterRole allows %s %s/%s %q: %v, want %v", tc.verb, tc.group, tc.resource, tc.object, got, tc.want)
			}
		})
	}
	// Cascading CRD protection lists any CRD's custom resources; that right comes only with
	// both of its gates, since list on every resource also reaches Secrets.
	wild := func(rules []rbacv1.PolicyRule) bool {
		for _, rule := range rules {
			if sets.New(rule.APIGroups...).Has("*") && sets.New(rule.Resources...).Has("*") && sets.New(rule.Verbs...).Has("list") {
				return true
			}
		}
		return false
	}
	for gates, want := range map[string]bool{
		"":                                 false,
		"ResourcesDeletionProtection=true": false,
		"DeletionProtectionForCRDCascadingGate=true":                                  false,
		"ResourcesDeletionProtection=true,DeletionProtectionForCRDCascadingGate=true": true,
	} {
		got := wild(find[*rbacv1.ClusterRole](mustRender(t, values("featureGates", gates)).objects, "kruise-manager-role").Rules)
		if got != want {
			t.Errorf("featureGates %q: the ClusterRole lists every resource: %v, want %v", gates, got, want)
		}
	}
	// ResourceDistribution writes its copies by name in any namespace, and only with its gate on.
	rdOn := find[*rbacv1.ClusterRole](mustRender(t, map[string]any{"featureGates": "ResourceDistributionGate=true"}).objects, "kruise-manager-role")
	rdCases := []struct {
		name                  string
		group, resource, verb string
		want                  bool
	}{
		{"with ResourceDistributionGate on it writes Secret copies in any namespace", "", "secrets", "update", true},
		{"with ResourceDistributionGate on it updates ConfigMap copies in any namespace", "", "configmaps", "update", true},
		{"with ResourceDistributionGate on it deletes copies from namespaces no longer targeted", "", "secrets", "delete", true},
		{"with ResourceDistributionGate on it still cannot list secrets cluster-wide", "", "secrets", "list", false},
		{"with ResourceDistributionGate on it still cannot watch ConfigMaps cluster-wide", "", "configmaps", "watch", false},
	}
	for _, tc := range rdCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := can(rdOn.Rules, tc.group, tc.resource, tc.verb, ""); got != tc.want {
				t.Errorf("ClusterRole allows %s %s/%s: %v, want %v", tc.verb, tc.group, tc.resource, got, tc.want)
			}
		})
	}
	role := find[*rbacv1.Role](r.objects, "kruise-manager-role")
	for _, want := range [][2]string{{"", "secrets"}, {"coordination.k8s.io", "leases"}, {"", "configmaps"}} {
		if !can(role.Rules, want[0], want[1], "update", "") {
			t.Errorf("Role in kruise-system lacks update on %s/%s", want[0], want[1])
		}
	}
	if role.Namespace != "kruise-system" {
		t.Errorf("manager Role in %q, want kruise-system", role.Namespace)
	}
	// Every CRD the chart renders is among the CRD resourceNames.
	var names []string
	for _, rule := range cr.Rules {
		if len(rule.ResourceNames) > 0 && sets.New(rule.Resources...).Has("customresourcedefinitions") {
			names = rule.ResourceNames
		}
	}
	var crds []string
	for _, c := range all[*apiextensionsv1.CustomResourceDefinition](r.objects) {
		crds = append(crds, c.Name)
	}
	sort.Strings(crds)
	sort.Strings(names)
	if d := cmp.Diff(crds, names); d != "" {
		t.Errorf("CRD resourceNames (-rendered CRDs +rule):\n%s", d)
	}
}

// webhookTable is charts/kruise/files/webhooks.yaml.
type webhookTable struct {
	Mutating     []webhookEntry  `json:"mutating"`
	Validating   []webhookEntry  `json:"validating"`
	GateDefaults map[string]bool `json:"gateDefaults"`
}

// webhookRule is a rule of the table: an operation named in OperationGates is rendered only
// while that gate is on.
type webhookRule struct {
	admissionregistrationv1.RuleWithOperations
	OperationGates map[string]string `json:"operationGates"`
}

type webhookEntry struct {
	Name        string        `json:"name"`
	Path        string        `json:"path"`
	PodWebhook  bool          `json:"podWebhook"`
	Protection  bool          `json:"protection"`
	SideEffects string        `json:"sideEffects"`
	Rules       []webhookRule `json:"rules"`
}

// webhookView is what the chart decides for one webhook.
type webhookView struct {
	Name, FailurePolicy, URL, ServicePath string
	Timeout                               int32
	Rules                                 []admissionregistrationv1.RuleWithOperations
	NamespaceSelectorKeys                 []string
	ObjectSelector                        map[string]string
	ObjectSelectorKeys                    []string
	Versions                              []string
}

func viewWebhooks(r *rendered) []webhookView {
	var out []webhookView
	add := func(name string, fp *admissionregistrationv1.FailurePolicyType, cc admissionregistrationv1.WebhookClientConfig, timeout *int32,
		rules []admissionregistrationv1.RuleWithOperations, ns, obj *metav1LabelSelector, versions []string) {
		v := webhookView{Name: name, FailurePolicy: string(*fp), Timeout: *timeout, Rules: rules, Versions: versions}
		if cc.URL != nil {
			v.URL = *cc.URL
		}
		if cc.Service != nil {
			v.ServicePath = cc.Service.Namespace + "/" + cc.Service.Name + ":" + itoa(*cc.Service.Port) + *cc.Service.Path
		}
		if ns != nil {
			for _, e := range ns.MatchExpressions {
				v.NamespaceSelectorKeys = append(v.NamespaceSelectorKeys, e.Key+" "+string(e.Operator)+" "+strings.Join(e.Values, ","))
			}
		}
		if obj != nil {
			v.ObjectSelector = obj.MatchLabels
			for _, e := range obj.MatchExpressions {
				v.ObjectSelectorKeys = append(v.ObjectSelectorKeys, e.Key+" "+string(e.Operator)+" "+strings.Join(e.Values, ","))
			}
		}
		out = append(out, v)
	}
	for _, m := range all[*admissionregistrationv1.MutatingWebhookConfiguration](r.objects) {
		for _, w := range m.Webhooks {
			add(w.Name, w.FailurePolicy, w.ClientConfig, w.TimeoutSeconds, w.Rules, w.NamespaceSelector, w.ObjectSelector, w.AdmissionReviewVersions)
		}
	}
	for _, m := range all[*admissionregistrationv1.ValidatingWebhookConfiguration](r.objects) {
		for _, w := range m.Webhooks {
			add(w.Name, w.FailurePolicy, w.ClientConfig, w.TimeoutSeconds, w.Rules, w.NamespaceSelector, w.ObjectSelector, w.AdmissionReviewVersions)
		}
	}
	return out
}

func TestWebhookConfigurations(t *testing.T) {
	var table webhookTable
	if err := yaml.UnmarshalStrict(readFile(t, filepath.Join(chartDir(t), "files", "webhooks.yaml")), &table); err != nil {
		t.Fatalf("files/webhooks.yaml: %v", err)
	}
	podSkip := []string{"control-plane NotIn openkruise", "kubernetes.io/metadata.name NotIn kube-system,kruise-system"}
	// want derives the expected webhooks from the table, the way the contract says the chart must.
	// gates are the featureGates the case sets; the others are at the table's gateDefaults.
	want := func(failPods, failDefault string, timeout int32, url string, extraNS []string, obj map[string]string, gates map[string]bool) []webhookView {
		var out []webhookView
		for _, e := range append(append([]webhookEntry{}, table.Mutating...), table.Validating...) {
			var rules []admissionregistrationv1.RuleWithOperations
			for _, r := range e.Rules {
				rule := r.RuleWithOperations
				rule.Operations = nil
				for _, op := range r.Operations {
					gate, gated := r.OperationGates[string(op)]
					on, set := gates[gate]
					if !gated || (set && on) || (!set && table.GateDefaults[gate]) {
						rule.Operations = append(rule.Operations, op)
					}
				}
				rules = append(rules, rule)
			}
			v := webhookView{Name: e.Name, FailurePolicy: failDefault, Timeout: timeout, Rules: rules, ObjectSelector: obj, Versions: []string{"v1", "v1beta1"}}
			if e.PodWebhook {
				v.FailurePolicy = failPods
				v.NamespaceSelectorKeys = append(v.NamespaceSelectorKeys, podSkip...)
			}
			// Deletion protection fails open, sees only labelled objects and skips kube-system,
			// whatever the values say of the others.
			if e.Protection {
				v.FailurePolicy = "Ignore"
				v.NamespaceSelectorKeys = append(v.NamespaceSelectorKeys, "kubernetes.io/metadata.name NotIn kube-system")
				v.ObjectSelector, v.ObjectSelectorKeys = nil, []string{"policy.kruise.io/delete-protection Exists "}
			}
			v.NamespaceSelectorKeys = append(v.NamespaceSelectorKeys, extraNS...)
			if url != "" {
				v.URL = url + e.Path
			} else {
				v.ServicePath = "kruise-system/kruise-webhook-service:443" + e.Path
			}
			out = append(out, v)
		}
		return out
	}
	cases := []struct {
		name string
		vals map[string]any
		want []webhookView
	}{
		{"the defaults: pods Ignore, others Fail, through the Service", nil, want("Ignore", "Fail", 30, "", nil, nil, nil)},
		{"policies and timeout come from values", values("webhookConfiguration.failurePolicy", map[string]any{"pods": "Fail", "default": "Ignore"}, "webhookConfiguration.timeoutSeconds", 5),
			want("Fail", "Ignore", 5, "", nil, nil, nil)},
		{"URL mode calls host:webhookPort/path", values("webhookConfiguration.host", "kruise.example.com", "manager.webhookPort", 19876),
			want("Ignore", "Fail", 30, "https://kruise.example.com:19876", nil, nil, nil)},
		{"a gated operation is rendered as featureGates sets its gate: vpod.kb.io answers pod UPDATE with PodUnavailableBudgetUpdateGate on",
			values("featureGates", "PodUnavailableBudgetUpdateGate=true"),
			want("Ignore", "Fail", 30, "", nil, nil, map[string]bool{"PodUnavailableBudgetUpdateGate": true})},
		{"the workload webhooks answer DELETE only with ResourcesDeletionProtection on",
			values("featureGates", "ResourcesDeletionProtection=true"),
			want("Ignore", "Fail", 30, "", nil, nil, map[string]bool{"ResourcesDeletionProtection": true})},
		{"extra namespace expressions are ANDed in and the object selector is set",
			values("webhookConfiguration.namespaceSelector", map[string]any{"matchExpressions": []any{map[string]any{"key": "skip", "operator": "DoesNotExist"}}},
				"webhookConfiguration.objectSelector", map[string]any{"matchLabels": map[string]any{"kruise": "on"}}),
			want("Ignore", "Fail", 30, "", []string{"skip DoesNotExist "}, map[string]string{"kruise": "on"}, nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, viewWebhooks(mustRender(t, tc.vals))); d != "" {
				t.Errorf("webhooks (-want +got):\n%s", d)
			}
		})
	}
	for _, required := range []string{"mcloneset.kb.io", "vcloneset.kb.io", "mpod.kb.io"} {
		found := false
		for _, v := range viewWebhooks(mustRender(t, nil)) {
			found = found || v.Name == required
		}
		if !found {
			t.Errorf("webhook %s is not rendered", required)
		}
	}
}

func TestWebhookServiceReachesTheManager(t *testing.T) {
	cases := []struct {
		name     string
		vals     map[string]any
		wantPort string
	}{
		{"the default webhook port", nil, "443->9876"},
		{"a custom webhook port", values("manager.webhookPort", 19876), "443->19876"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.vals)
			svc := find[*corev1.Service](r.objects, "kruise-webhook-service")
			dep := find[*appsv1.Deployment](r.objects, "kruise-controller-manager")
			if len(svc.Spec.Ports) != 1 {
				t.Fatalf("service ports %+v, want one", svc.Spec.Ports)
			}
			p := svc.Spec.Ports[0]
			if d := cmp.Diff(tc.wantPort, itoa(p.Port)+"->"+p.TargetPort.String()); d != "" {
				t.Errorf("service port (-want +got):\n%s", d)
			}
			podLabels := dep.Spec.Template.Labels
			for k, v := range svc.Spec.Selector {
				if podLabels[k] != v {
					t.Errorf("service selector %s=%s does not match the manager pod labels %v", k, v, podLabels)
				}
			}
			for k, v := range dep.Spec.Selector.MatchLabels {
				if podLabels[k] != v {
					t.Errorf("deployment selector %s=%s does not match its pod labels %v", k, v, podLabels)
				}
			}
		})
	}
}

func TestPodLabelsAndAnnotationsMerge(t *testing.T) {
	r := mustRender(t, values(
		"manager.podLabels", map[string]any{"team": "platform", "control-plane": "mine"},
		"manager.podAnnotations", map[string]any{"example.com/scrape": "true"},
		"daemon.podLabels", map[string]any{"team": "nodes", "control-plane": "mine"},
		"daemon.podAnnotations", map[string]any{"example.com/scrape": "false"},
	))
	dep := find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template
	ds := find[*appsv1.DaemonSet](r.objects, "kruise-daemon").Spec.Template
	got := []string{dep.Labels["team"], dep.Labels["control-plane"], dep.Annotations["example.com/scrape"],
		ds.Labels["team"], ds.Labels["control-plane"], ds.Annotations["example.com/scrape"]}
	want := []string{"platform", "controller-manager", "true", "nodes", "daemon", "false"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pod labels and annotations; the selector label must win (-want +got):\n%s", d)
	}
}

// The pre-delete hook is an apiserver client like the manager: where the manager needs the host
// network (a pod network that cannot reach the apiserver), so does the hook's Job.
func TestHookFollowsTheManagersHostNetwork(t *testing.T) {
	for _, host := range []bool{false, true} {
		t.Run(fmt.Sprintf("manager.hostNetwork=%v", host), func(t *testing.T) {
			spec := find[*batchv1.Job](mustRender(t, values("manager.hostNetwork", host)).hooks, "kruise-uninstall-check").Spec.Template.Spec
			wantDNS := corev1.DNSPolicy("")
			if host {
				wantDNS = corev1.DNSClusterFirstWithHostNet
			}
			if spec.HostNetwork != host || spec.DNSPolicy != wantDNS {
				t.Errorf("hook pod hostNetwork %v dnsPolicy %q, want %v %q", spec.HostNetwork, spec.DNSPolicy, host, wantDNS)
			}
		})
	}
}

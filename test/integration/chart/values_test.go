package chart

import (
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"

	"github.com/kruise-addon/kruise-addon/versions"
)

func TestSchemaRejectsBadValues(t *testing.T) {
	nodeTerm := func(key string, values ...any) map[string]any {
		return map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
			"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": key, "operator": "In", "values": values}}}},
		}}}
	}
	const nodeExpr = "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchExpressions/0"
	cases := []struct {
		name string
		vals map[string]any
		// wantField is how the error names the field: a JSON pointer for the schema, a dotted
		// path for the templates' own checks (byTemplate).
		wantField  string
		byTemplate bool
	}{
		{"zero manager replicas", values("manager.replicas", 0), "/manager/replicas", false},
		{"replicas as a string", values("manager.replicas", "two"), "/manager/replicas", false},
		{"a trillion replicas", values("manager.replicas", 1e12), "/manager/replicas", false},
		{"an unknown pod failure policy", values("webhookConfiguration.failurePolicy.pods", "Maybe"), "/webhookConfiguration/failurePolicy/pods", false},
		{"an unknown default failure policy", values("webhookConfiguration.failurePolicy.default", "fail"), "/webhookConfiguration/failurePolicy/default", false},
		{"an unknown top-level key", values("replicaCount", 3), "additional properties 'replicaCount'", false},
		{"an unknown manager key", values("manager.replica", 3), "/manager", false},
		{"a webhook timeout above the API's 30s", values("webhookConfiguration.timeoutSeconds", 31), "/webhookConfiguration/timeoutSeconds", false},
		{"a feature gate without a value", values("featureGates", "KruiseDaemon"), "/featureGates", false},
		{"a feature gate list across lines", values("featureGates", "A=true\n,B=false"), "/featureGates", false},
		{"daemon.enabled as a string", values("daemon.enabled", "yes"), "/daemon/enabled", false},
		{"a bad pull policy", values("manager.image.pullPolicy", "Sometimes"), "/manager/image/pullPolicy", false},
		{"a bad toleration operator", values("manager.tolerations", []any{map[string]any{"key": "a", "operator": "Maybe"}}), "/manager/tolerations/0/operator", false},
		{"a toleration key that is no label key", values("manager.tolerations", []any{map[string]any{"key": "dedicated pool", "operator": "Exists"}}), "/manager/tolerations/0/key", false},
		{"a toleration without a key that is not Exists", values("daemon.tolerations", []any{map[string]any{"operator": "Equal", "value": "x"}}), "/daemon/tolerations/0/operator", false},
		{"a port out of range", values("manager.webhookPort", 70000), "/manager/webhookPort", false},
		{"a malformed memory quantity", values("manager.resources", map[string]any{"limits": map[string]any{"memory": "lots"}}), "/manager/resources/limits/memory", false},
		{"a relative socket location", values("daemon.socketLocation", "var/run"), "/daemon/socketLocation", false},
		{"the host's root as socket location", values("daemon.socketLocation", "/"), "/daemon/socketLocation", false},
		{"a socket location that climbs to the root", values("daemon.socketLocation", "/var/run/.."), "/daemon/socketLocation", false},
		{"the control plane's keys as socket location", values("daemon.socketLocation", "/etc/kubernetes"), "'/etc/kubernetes' does not match pattern", false},
		{"the kernel's process table as socket location", values("daemon.socketLocation", "/proc"), "'/proc' does not match pattern", false},
		{"every pod's volumes as socket location", values("daemon.socketLocation", "/var/lib/kubelet"), "'/var/lib/kubelet' does not match pattern", false},
		{"a socket file that climbs out of the socket location", values("daemon.socketFile", "../../etc/shadow"), "/daemon/socketFile", false},
		{"imagePullSecrets as strings", values("imagePullSecrets", []any{"pull"}), "/imagePullSecrets/0", false},
		{"a priority class that is no name", values("manager.priorityClassName", "x\nhostPID: true"), "/manager/priorityClassName", false},
		{"a hook registry with a space", values("hook.image.registry", "evil registry"), "/hook/image/registry", false},
		{"an unknown workers kind (the manager has no such flag)", values("manager.workers", map[string]any{"nosuchkind": 2}), "/manager/workers", false},
		{"a workers kind in the wrong case", values("manager.workers", map[string]any{"Bad_Kind": 2}), "/manager/workers", false},
		{"zero workers", values("manager.workers", map[string]any{"cloneset": 0}), "/manager/workers/cloneset", false},
		{"a node name that is no label value", values("manager.affinity", nodeTerm("kubernetes.io/hostname", "node_a!")), "/manager" + nodeExpr + "/values/0", false},
		{"a pool label that is no label key", values("manager.affinity", nodeTerm("node pool", "system")), "/manager" + nodeExpr + "/key", false},
		{"a node to keep the daemon off that is no label value", values("daemon.affinity", nodeTerm("kubernetes.io/hostname", "Node A")), "/daemon" + nodeExpr + "/values/0", false},
		{"a node selector key that is no label key", values("manager.nodeSelector", map[string]any{"node pool": "system"}), "/manager/nodeSelector", false},
		{"a liveness period of zero seconds", values("manager.livenessProbe.periodSeconds", 0), "/manager/livenessProbe/periodSeconds", false},
		{"a liveness delay as a duration string", values("manager.livenessProbe.initialDelaySeconds", "30s"), "/manager/livenessProbe/initialDelaySeconds", false},
		{"an unknown liveness probe key", values("manager.livenessProbe.path", "/live"), "/manager/livenessProbe", false},
		{"a PDB percentage above 100%", values("manager.podDisruptionBudget", map[string]any{"enabled": true, "minAvailable": "150%"}), "/manager/podDisruptionBudget/minAvailable", false},
		{"a PDB minAvailable above replicas", values("manager.replicas", 2, "manager.podDisruptionBudget", map[string]any{"enabled": true, "minAvailable": 3}),
			"manager.podDisruptionBudget.minAvailable 3 is above manager.replicas 2", true},
		{"the metrics port on the webhook port", values("manager.metricsPort", 9876), "manager.metricsPort and manager.webhookPort are both 9876", true},
		{"the health port on the metrics port", values("manager.healthProbePort", 8080), "manager.healthProbePort and manager.metricsPort are both 8080", true},
		{"a CPU limit of 100000", values("manager.resources", map[string]any{"limits": map[string]any{"cpu": 100000}}),
			"manager.resources.limits.cpu 100000 is out of range: use 10m to 64", true},
		{"a daemon memory limit of 1Ei", values("daemon.resources", map[string]any{"limits": map[string]any{"memory": "1Ei"}}),
			"daemon.resources.limits.memory 1Ei is out of range: use 16Mi to 64Gi", true},
		{"a CPU request above its limit, which the apiserver refuses", values("manager.resources", map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}}),
			"manager.resources.requests.cpu 2 is above manager.resources.limits.cpu 1", true},
		{"a memory request above its limit in other units", values("server.resources", map[string]any{"requests": map[string]any{"memory": "1Gi"}, "limits": map[string]any{"memory": "1000Mi"}}),
			"server.resources.requests.memory 1Gi is above server.resources.limits.memory 1000Mi", true},
		{"a quantity in exponent form", values("manager.resources", map[string]any{"limits": map[string]any{"cpu": "1e3"}}), "/manager/resources/limits/cpu", false},
		{"a host-network manager on the daemon's port", values("manager.hostNetwork", true, "manager.webhookPort", 10221), "daemon.port and manager.webhookPort are both 10221", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.vals)
			if err == nil {
				t.Fatal("render succeeded, want it refused")
			}
			kind := "values don't meet the specifications of the schema"
			if tc.byTemplate {
				kind = "execution error"
			}
			if !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("error %q does not name %q as a %q", err, tc.wantField, kind)
			}
		})
	}
	// The same values on their own are fine: each row fails for its one reason.
	for _, ok := range []map[string]any{
		values("manager.replicas", 3, "manager.podDisruptionBudget", map[string]any{"enabled": true, "minAvailable": 3}),
		values("manager.hostNetwork", false, "manager.webhookPort", 10221),
		values("manager.resources", map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1Gi"}, "limits": map[string]any{"cpu": "1000m", "memory": "1024Mi"}}),
		values("manager.replicas", 2, "manager.podDisruptionBudget", map[string]any{"enabled": false, "minAvailable": 3}),
	} {
		if _, err := render(t, ok); err != nil {
			t.Errorf("render %v: %v", ok, err)
		}
	}
}

func TestKubeVersionRange(t *testing.T) {
	cases := []struct {
		name    string
		version string
		wantErr bool
	}{
		{"an EKS build string is accepted", "v1.30.4-eks-a1b2c3", false},
		{"a GKE build string is accepted", "v1.29.0-gke.1", false},
		{"the newest supported minor is accepted", "v1.37.2", false},
		{"v1.24 is refused", "v1.24.3", true},
		{"v1.28 is refused", "v1.28.15", true},
		{"v1.38 is refused until a release supports it", "v1.38.0", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, nil, withKubeVersion(tc.version))
			if tc.wantErr && (err == nil || !strings.Contains(err.Error(), "kubeVersion")) {
				t.Errorf("render on %s: err %v, want a kubeVersion error", tc.version, err)
			}
			if !tc.wantErr && err != nil {
				t.Errorf("render on %s: %v", tc.version, err)
			}
		})
	}

	// The chart's range and the compatibility table's row for this build agree on every minor.
	constraint := loadChart(t).Metadata.KubeVersion
	cur := versions.Current()
	for minor := 20; minor <= 40; minor++ {
		for _, s := range []string{fmt.Sprintf("v1.%d.0", minor), fmt.Sprintf("v1.%d.3-eks-a1b2c3", minor)} {
			cv, err := versions.ParseClusterVersion(s)
			if err != nil {
				t.Fatal(err)
			}
			if chart, table := chartutil.IsCompatibleRange(constraint, s), cur.Supports(cv); chart != table {
				t.Errorf("%s: chart kubeVersion %q says %v, table row %s says %v", s, constraint, chart, cur.Addon, table)
			}
		}
	}
}

func TestLintWithTheSDK(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(testKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]map[string]any{"the defaults": {}}
	for _, f := range ciValuesFiles(t) {
		cases[f] = readValues(t, f)
	}
	for name, vals := range cases {
		t.Run(name, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir(t), vals, "kruise-system", kv)
			for _, m := range l.Messages {
				// The only info-level note helm has for us is the missing icon.
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %s", m.Error())
				}
			}
		})
	}
}

func TestNotes(t *testing.T) {
	cases := []struct {
		name        string
		vals        map[string]any
		releaseNS   string
		wantContain []string
		wantAbsent  []string
	}{
		{"the defaults in kruise-system ask to label the namespace", nil, "kruise-system",
			[]string{"rollout status deployment/kruise-controller-manager", "control-plane=openkruise"}, []string{"WARNING"}},
		{"a release elsewhere needs no label step", nil, "default", nil, []string{"kubectl label namespace"}},
		{"pods Fail warns about the cluster-wide outage", values("webhookConfiguration.failurePolicy.pods", "Fail"), "kruise-system", []string{"WARNING"}, nil},
		{"the daemon off says what stops working", values("daemon.enabled", false), "kruise-system", []string{"kruise-daemon is off"}, []string{"daemonset/kruise-daemon"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			notes := mustRender(t, tc.vals, inNamespace(tc.releaseNS)).notes
			for _, s := range tc.wantContain {
				if !strings.Contains(notes, s) {
					t.Errorf("notes lack %q:\n%s", s, notes)
				}
			}
			for _, s := range tc.wantAbsent {
				if strings.Contains(notes, s) {
					t.Errorf("notes contain %q:\n%s", s, notes)
				}
			}
		})
	}
}

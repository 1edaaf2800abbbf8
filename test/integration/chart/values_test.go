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
	cases := []struct {
		name      string
		vals      map[string]any
		wantField string
	}{
		{"zero manager replicas", values("manager.replicas", 0), "/manager/replicas"},
		{"replicas as a string", values("manager.replicas", "two"), "/manager/replicas"},
		{"an unknown pod failure policy", values("webhookConfiguration.failurePolicy.pods", "Maybe"), "/webhookConfiguration/failurePolicy/pods"},
		{"an unknown default failure policy", values("webhookConfiguration.failurePolicy.default", "fail"), "/webhookConfiguration/failurePolicy/default"},
		{"an unknown top-level key", values("replicaCount", 3), "additional properties 'replicaCount'"},
		{"an unknown manager key", values("manager.replica", 3), "/manager"},
		{"a webhook timeout above the API's 30s", values("webhookConfiguration.timeoutSeconds", 31), "/webhookConfiguration/timeoutSeconds"},
		{"a feature gate without a value", values("featureGates", "KruiseDaemon"), "/featureGates"},
		{"daemon.enabled as a string", values("daemon.enabled", "yes"), "/daemon/enabled"},
		{"a bad pull policy", values("manager.image.pullPolicy", "Sometimes"), "/manager/image/pullPolicy"},
		{"a bad toleration operator", values("manager.tolerations", []any{map[string]any{"key": "a", "operator": "Maybe"}}), "/manager/tolerations/0/operator"},
		{"a port out of range", values("manager.webhookPort", 70000), "/manager/webhookPort"},
		{"a malformed memory quantity", values("manager.resources", map[string]any{"limits": map[string]any{"memory": "lots"}}), "/manager/resources/limits/memory"},
		{"a relative socket location", values("daemon.socketLocation", "var/run"), "/daemon/socketLocation"},
		{"imagePullSecrets as strings", values("imagePullSecrets", []any{"pull"}), "/imagePullSecrets/0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.vals)
			if err == nil {
				t.Fatal("render succeeded, want a schema error")
			}
			if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("error %q does not name %q as a schema failure", err, tc.wantField)
			}
		})
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

package chart

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/features"
)

// Without the daemon, the manager's KruiseDaemon gate is off too, so that its webhooks refuse
// ContainerRecreateRequests and ImagePullJobs that no daemon would ever carry out. The rendered
// args are parsed by the manager's own flags.
func TestNoDaemonTurnsTheManagersDaemonGateOff(t *testing.T) {
	cases := []struct {
		name      string
		vals      map[string]any
		wantGates string
		wantGate  bool
	}{
		{"the defaults leave the gate on", nil, "ImagePullJobGate=true", true},
		{"daemon.enabled false turns the gate off", values("daemon.enabled", false), "KruiseDaemon=false", false},
		{"daemon.enabled false keeps the other gates", values("daemon.enabled", false, "featureGates", "PodWebhook=true, ImagePullJobGate=true"), "PodWebhook=true,ImagePullJobGate=true,KruiseDaemon=false", false},
		{"daemon.enabled false wins over KruiseDaemon=true", values("daemon.enabled", false, "featureGates", "KruiseDaemon=true,PodWebhook=true"), "PodWebhook=true,KruiseDaemon=false", false},
		{"the gates pass as given while the daemon runs", values("featureGates", "PodWebhook=true"), "PodWebhook=true,ImagePullJobGate=true", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := managerPod(t, tc.vals).Containers[0].Args
			gotGates := ""
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
					gotGates = v
				}
			}
			o := manager.NewOptions()
			fs := pflag.NewFlagSet("kruise-manager", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatalf("the manager rejects its rendered args %v: %v", args, err)
			}
			got := []any{gotGates, o.Gates.Enabled(features.KruiseDaemon)}
			if diff := cmp.Diff([]any{tc.wantGates, tc.wantGate}, got); diff != "" {
				t.Errorf("--feature-gates, KruiseDaemon enabled (-want +got):\n%s", diff)
			}
		})
	}
}

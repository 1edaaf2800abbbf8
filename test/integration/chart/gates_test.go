package chart

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
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
			o := parsedManager(t, args)
			got := []any{featureGatesArg(args), o.Gates.Enabled(features.KruiseDaemon)}
			testkit.Diff(t, "--feature-gates, KruiseDaemon enabled", []any{tc.wantGates, tc.wantGate}, got)
		})
	}
}

// TestImagePullJobGateIsOnWithTheDaemon: image pre-pull (ImagePullJob, ImageListPullJob and the
// scheduled pre-pull of AdvancedCronJob) works after a default install, because the chart turns
// ImagePullJobGate on whenever the daemon runs; without the daemon it is off in the manager, so
// the ImagePullJob webhook refuses jobs no daemon would pull. The manager's gates are the rendered
// args parsed by its own flags and settled by features.ApplyDependencies, as at its start.
func TestImagePullJobGateIsOnWithTheDaemon(t *testing.T) {
	cases := []struct {
		name            string
		vals            map[string]any
		wantManagerGate bool
		wantDaemonGates string // "-" when no daemon is rendered
	}{
		{"a default install turns the gate on in the manager and the daemon", nil, true, "ImagePullJobGate=true"},
		{"other gates keep it on", values("featureGates", "PodWebhook=true"), true, "PodWebhook=true,ImagePullJobGate=true"},
		{"featureGates ImagePullJobGate=false turns it off", values("featureGates", "ImagePullJobGate=false"), false, "ImagePullJobGate=false"},
		{"daemon.enabled false turns it off with the daemon", values("daemon.enabled", false), false, "-"},
		{"KruiseDaemon=false turns it off with the daemon", values("featureGates", "KruiseDaemon=false"), false, "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.vals)
			o := parsedManager(t, find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Args)
			if _, err := features.ApplyDependencies(o.Gates); err != nil {
				t.Fatal(err)
			}
			daemonGates := "-"
			if ds := find[*appsv1.DaemonSet](r.objects, "kruise-daemon"); ds != nil {
				daemonGates = featureGatesArg(ds.Spec.Template.Spec.Containers[0].Args)
			}
			got := []any{o.Gates.Enabled(features.ImagePullJobGate), daemonGates}
			testkit.Diff(t, "the manager's ImagePullJobGate, the daemon's --feature-gates", []any{tc.wantManagerGate, tc.wantDaemonGates}, got)
		})
	}
}

// parsedManager is the manager's options as its own flags parse args, the rendered args of its
// container; t fails when the manager would reject them.
func parsedManager(t *testing.T, args []string) *manager.Options {
	t.Helper()
	o := manager.NewOptions()
	fs := pflag.NewFlagSet("kruise-manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the manager rejects its rendered args %v: %v", args, err)
	}
	return o
}

// featureGatesArg is the value of the --feature-gates argument among args, empty when none.
func featureGatesArg(args []string) string {
	gates := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
			gates = v
		}
	}
	return gates
}

package chart

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/features"
)

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
			args := find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Args
			o := manager.NewOptions()
			fs := pflag.NewFlagSet("kruise-manager", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatalf("the manager rejects its rendered args %v: %v", args, err)
			}
			if _, err := features.ApplyDependencies(o.Gates); err != nil {
				t.Fatal(err)
			}
			daemonGates := "-"
			if ds := find[*appsv1.DaemonSet](r.objects, "kruise-daemon"); ds != nil {
				daemonGates = ""
				for _, a := range ds.Spec.Template.Spec.Containers[0].Args {
					if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
						daemonGates = v
					}
				}
			}
			got := []any{o.Gates.Enabled(features.ImagePullJobGate), daemonGates}
			if d := cmp.Diff([]any{tc.wantManagerGate, tc.wantDaemonGates}, got); d != "" {
				t.Errorf("the manager's ImagePullJobGate, the daemon's --feature-gates (-want +got):\n%s", d)
			}
		})
	}
}

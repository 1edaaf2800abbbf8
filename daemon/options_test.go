package daemon

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/features/featurestest"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestChartArgsParse feeds the arguments charts/kruise/templates/daemon-daemonset.yaml renders.
func TestChartArgsParse(t *testing.T) {
	type parsed struct {
		SocketFile, HostVarRun, Addr string
		Workers                      int
		ImagePullJobGate             bool
		ConfigNamespace              string
		Pprof                        string
	}
	type tcase struct {
		args []string
		want parsed
	}
	tests := map[string]tcase{
		"the defaults probe under /hostvarrun and serve on :10221 with two pull workers": {
			args: nil,
			want: parsed{HostVarRun: "/hostvarrun", Addr: ":10221", Workers: 2, ConfigNamespace: "kruise-daemon-config", Pprof: "127.0.0.1:10222"},
		},
		"--enable-pprof=false turns the profiles off": {
			args: []string{"--enable-pprof=false", "--pprof-addr=not-an-address"},
			want: parsed{HostVarRun: "/hostvarrun", Addr: ":10221", Workers: 2, ConfigNamespace: "kruise-daemon-config", Pprof: "0"},
		},
		"every flag the chart renders is understood": {
			args: []string{"--hostvarrun=/hostvarrun", "--socket-file=containerd/containerd.sock", "--addr=:10222",
				"--feature-gates=ImagePullJobGate=true", "--max-workers-for-pull-image=4", "--daemon-config-namespace=pull-config", "-v=4", "--pprof-addr=127.0.0.1:10223"},
			want: parsed{SocketFile: "containerd/containerd.sock", HostVarRun: "/hostvarrun", Addr: ":10222", Workers: 4, ImagePullJobGate: true, ConfigNamespace: "pull-config", Pprof: "127.0.0.1:10223"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		t.Setenv("NODE_NAME", "n1")
		o := NewOptions()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		got := parsed{o.SocketFile, o.HostVarRun, o.Addr, o.MaxWorkersForPullImage, o.Gates.Enabled(features.ImagePullJobGate), o.ConfigNamespace, o.pprofAddr()}
		testkit.Diff(t, "parsed options", tt.want, got)
		if o.NodeName != "n1" {
			t.Errorf("node name %q, want it from NODE_NAME", o.NodeName)
		}
	})
}

// TestEveryGateIsAccepted checks the daemon starts with every 1.8 gate turned on: none is refused.
func TestEveryGateIsAccepted(t *testing.T) {
	t.Setenv("NODE_NAME", "n1")
	o := NewOptions()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--feature-gates=" + featurestest.AllOn()}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want every gate accepted", err)
	}
}

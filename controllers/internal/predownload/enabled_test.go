package predownload

import (
	"fmt"
	"testing"

	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestEnabled(t *testing.T) {
	type tcase struct {
		daemon, preDownload bool
		want                bool
	}
	tests := map[string]tcase{
		"both kruise-daemon and the feature on pre-download": {daemon: true, preDownload: true, want: true},
		"the feature off does not pre-download":              {daemon: true},
		"kruise-daemon off does not pre-download":            {preDownload: true},
		"neither on does not pre-download":                   {},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		g := features.NewGate()
		spec := fmt.Sprintf("%s=%t,%s=%t", features.KruiseDaemon, tc.daemon, features.PreDownloadImageForInPlaceUpdate, tc.preDownload)
		if err := g.Set(spec); err != nil {
			t.Fatal(err)
		}
		if got := Enabled(g); got != tc.want {
			t.Fatalf("Enabled(%s) = %v, want %v", spec, got, tc.want)
		}
	})
}

func TestEnabledForDaemonSet(t *testing.T) {
	type tcase struct {
		gates string
		want  bool
	}
	tests := map[string]tcase{
		"the DaemonSet gate with kruise-daemon pre-downloads": {
			gates: "KruiseDaemon=true,PreDownloadImageForDaemonSetUpdate=true", want: true,
		},
		"the DaemonSet gate off, as by default in 1.8, does not pre-download": {gates: "KruiseDaemon=true"},
		"the in-place update gate alone does not pre-download for DaemonSets": {
			gates: "KruiseDaemon=true,PreDownloadImageForInPlaceUpdate=true",
		},
		"kruise-daemon off does not pre-download": {gates: "KruiseDaemon=false,PreDownloadImageForDaemonSetUpdate=true"},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		g := features.NewGate()
		if err := g.Set(tc.gates); err != nil {
			t.Fatal(err)
		}
		if got := EnabledForDaemonSet(g); got != tc.want {
			t.Fatalf("EnabledForDaemonSet(%s) = %v, want %v", tc.gates, got, tc.want)
		}
	})
}

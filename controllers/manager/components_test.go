package manager

import (
	"sort"
	"testing"

	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestControllerGates lists, for each setting of the gates, which controllers of components.go
// the manager sets up: the kinds kruise-daemon acts on need KruiseDaemon, the pull jobs
// ImagePullJobGate too, which pre-downloading turns on, and the probe controllers
// PodProbeMarkerGate, and the SidecarTerminator its gate.
func TestControllerGates(t *testing.T) {
	type tcase struct {
		gates string
		off   []string
	}
	cases := map[string]tcase{
		"with the default gates (1.8's) the pull jobs wait for ImagePullJobGate, ResourceDistribution and SidecarTerminator for their gates": {
			off: []string{"imagelistpulljob", "imagepulljob", "resourcedistribution", "sidecarterminator"},
		},
		"with ImagePullJobGate, ResourceDistributionGate and SidecarTerminator on every controller runs": {gates: "ImagePullJobGate=true,ResourceDistributionGate=true,SidecarTerminator=true"},
		"pre-downloading images turns the pull jobs on": {
			gates: "PreDownloadImageForInPlaceUpdate=true",
			off:   []string{"resourcedistribution", "sidecarterminator"},
		},
		"with KruiseDaemon off nothing the daemon acts on runs": {
			gates: "KruiseDaemon=false,ImagePullJobGate=true,ResourceDistributionGate=true,SidecarTerminator=true",
			off:   []string{"containerrecreaterequest", "imagelistpulljob", "imagepulljob", "nodeimage", "nodepodprobe", "podprobemarker", "sidecarterminator"},
		},
		"with PodProbeMarkerGate off the probe controllers do not run": {
			gates: "PodProbeMarkerGate=false",
			off:   []string{"imagelistpulljob", "imagepulljob", "nodepodprobe", "podprobemarker", "resourcedistribution", "sidecarterminator"},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		gates := features.NewGate()
		if tc.gates != "" {
			if err := gates.Set(tc.gates); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := features.ApplyDependencies(gates); err != nil {
			t.Fatal(err)
		}
		var off []string
		for _, c := range Controllers() {
			if on, gate := c.enabled(gates); !on {
				if gate == "" {
					t.Errorf("%s is off without naming its gate", c.Name)
				}
				off = append(off, c.Name)
			}
		}
		sort.Strings(off)
		testkit.Diff(t, "controllers off", tc.off, off)
	})
}

// TestDepsAreComplete: what the manager hands to kind packages has every field they use filled,
// and a controller's workers are its flag's value or the default.
func TestDepsAreComplete(t *testing.T) {
	o := NewOptions()
	o.Workers["cloneset"] = 7
	d := o.deps()
	if d.Gates == nil || d.Clock == nil || d.Workers == nil {
		t.Fatalf("incomplete deps: gates %v, clock %v, workers set %v", d.Gates, d.Clock, d.Workers != nil)
	}
	if got := d.Workers("cloneset"); got != 7 {
		t.Errorf("cloneset workers %d, want 7", got)
	}
	if got := d.Workers("a-kind-without-a-flag"); got != DefaultWorkers {
		t.Errorf("workers of a kind without a flag %d, want the default %d", got, DefaultWorkers)
	}
	o.Clock = nil
	if err := o.Validate(); err == nil {
		t.Error("options without a clock validated")
	}
}

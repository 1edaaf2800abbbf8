package features

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/featuregate"
)

func TestNewGateDefaults(t *testing.T) {
	cases := map[string]struct {
		gate featuregate.Feature
		want bool
	}{
		"PodWebhook is on by default":                        {PodWebhook, true},
		"KruiseDaemon is on by default":                      {KruiseDaemon, true},
		"ResourcesDeletionProtection is off by default":      {ResourcesDeletionProtection, false},
		"WorkloadSpread is on by default":                    {WorkloadSpread, true},
		"InPlaceUpdateEnvFromMetadata is on by default":      {InPlaceUpdateEnvFromMetadata, true},
		"PodIndexLabel is on by default":                     {PodIndexLabel, true},
		"ImagePullJobGate is off by default":                 {ImagePullJobGate, false},
		"CloneSetShortHash is off by default":                {CloneSetShortHash, false},
		"KruisePodReadinessGate is off by default":           {KruisePodReadinessGate, false},
		"PreDownloadImageForInPlaceUpdate is off by default": {PreDownloadImageForInPlaceUpdate, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NewGate().Enabled(tc.gate)); diff != "" {
				t.Errorf("Enabled(%s) (-want +got):\n%s", tc.gate, diff)
			}
		})
	}
}

func TestNewGateIsFreshEachCall(t *testing.T) {
	a, b := NewGate(), NewGate()
	if err := a.Set("PodWebhook=false"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(true, b.Enabled(PodWebhook)); diff != "" {
		t.Errorf("a second gate saw the first one's setting (-want +got):\n%s", diff)
	}
}

func TestGateFlagString(t *testing.T) {
	cases := map[string]struct {
		flag    string
		wantErr bool
		want    map[featuregate.Feature]bool
	}{
		"A=true,B=false sets both gates": {
			flag: "ImagePullJobGate=true,PodWebhook=false",
			want: map[featuregate.Feature]bool{ImagePullJobGate: true, PodWebhook: false},
		},
		"an unknown gate is an error":            {flag: "NoSuchGate=true", wantErr: true},
		"a value that is not a bool is an error": {flag: "PodWebhook=maybe", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewGate()
			err := g.Set(tc.flag)
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Fatalf("Set(%q) error = %v (-want +got):\n%s", tc.flag, err, diff)
			}
			got := map[featuregate.Feature]bool{}
			for k := range tc.want {
				got[k] = g.Enabled(k)
			}
			if diff := cmp.Diff(tc.want, got, cmpEmpty()); diff != "" {
				t.Errorf("gates after Set (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDependencies(t *testing.T) {
	cases := map[string]struct {
		flag        string
		wantChanged []string
		wantOff     []featuregate.Feature
		wantOn      []featuregate.Feature
	}{
		"defaults need no change": {flag: ""},
		"PodWebhook off turns the pod-webhook features off": {
			flag:        "PodWebhook=false",
			wantChanged: []string{"PodUnavailableBudgetDeleteGate=false", "WorkloadSpread=false"},
			wantOff:     []featuregate.Feature{WorkloadSpread, PodUnavailableBudgetDeleteGate},
		},
		"KruiseDaemon off turns the daemon features off": {
			flag: "KruiseDaemon=false",
			wantChanged: []string{"DaemonWatchingPod=false", "InPlaceUpdateEnvFromMetadata=false",
				"PodProbeMarkerGate=false"},
			wantOff: []featuregate.Feature{DaemonWatchingPod, InPlaceUpdateEnvFromMetadata, PodProbeMarkerGate},
		},
		"pre-downloading images turns ImagePullJobGate on": {
			flag:        "PreDownloadImageForInPlaceUpdate=true",
			wantChanged: []string{"ImagePullJobGate=true"},
			wantOn:      []featuregate.Feature{ImagePullJobGate, PreDownloadImageForInPlaceUpdate},
		},
		"KruiseDaemon off wins over pre-downloading": {
			flag: "KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true",
			wantChanged: []string{"DaemonWatchingPod=false", "ImagePullJobGate=false", "InPlaceUpdateEnvFromMetadata=false",
				"PodProbeMarkerGate=false", "PreDownloadImageForInPlaceUpdate=false"},
			wantOff: []featuregate.Feature{ImagePullJobGate, PreDownloadImageForInPlaceUpdate},
		},
		"ResourcesDeletionProtection off turns the CRD cascading gate off": {
			flag:        "ResourcesDeletionProtection=false,DeletionProtectionForCRDCascadingGate=true",
			wantChanged: []string{"DeletionProtectionForCRDCascadingGate=false"},
			wantOff:     []featuregate.Feature{DeletionProtectionForCRDCascadingGate},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewGate()
			if tc.flag != "" {
				if err := g.Set(tc.flag); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := ApplyDependencies(g)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantChanged, changed, cmpEmpty()); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
			for _, f := range tc.wantOff {
				if g.Enabled(f) {
					t.Errorf("%s is on, want off", f)
				}
			}
			for _, f := range tc.wantOn {
				if !g.Enabled(f) {
					t.Errorf("%s is off, want on", f)
				}
			}
		})
	}
}

func TestSpecsListEveryConstant(t *testing.T) {
	if diff := cmp.Diff(32, len(Specs())); diff != "" {
		t.Errorf("number of 1.8 gates (-want +got):\n%s", diff)
	}
}

func cmpEmpty() cmp.Option {
	return cmp.FilterValues(func(a, b any) bool { return isEmpty(a) && isEmpty(b) }, cmp.Ignore())
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case []string:
		return len(x) == 0
	case map[featuregate.Feature]bool:
		return len(x) == 0
	}
	return false
}

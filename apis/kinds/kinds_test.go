package kinds_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/apis/kinds"
)

// crdDir holds the CRDs `make manifests` generates into the chart.
var crdDir = filepath.Join("..", "..", "charts", "kruise", "files", "crds")

// facts is what the list says about one CRD, and what its file says.
type facts struct {
	Group, Kind, Resource string
	Namespaced            bool
	// Versions are the served versions, storage version first.
	Versions []string
}

func fromList(k kinds.Kind) facts {
	return facts{Group: k.Group, Kind: k.Kind, Resource: k.Resource, Namespaced: k.Namespaced, Versions: k.Versions}
}

func fromCRD(crd *apiextensionsv1.CustomResourceDefinition) facts {
	f := facts{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Resource: crd.Spec.Names.Plural, Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped}
	var storage string
	var served []string
	for _, v := range crd.Spec.Versions {
		switch {
		case v.Storage:
			storage = v.Name
		case v.Served:
			served = append(served, v.Name)
		}
	}
	sort.Strings(served)
	f.Versions = append([]string{storage}, served...)
	return f
}

// TestListMatchesChartCRDs checks every CRD file of the chart is in the list, and every listed
// kind has a CRD file, with the same name, kind, plural, scope and versions.
func TestListMatchesChartCRDs(t *testing.T) {
	entries, err := os.ReadDir(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	inFiles := map[string]facts{}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".yaml" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(crdDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatalf("parse %s: %v", e.Name(), err)
		}
		inFiles[crd.Name] = fromCRD(crd)
		if want := crd.Spec.Group + "_" + crd.Spec.Names.Plural + ".yaml"; e.Name() != want {
			t.Errorf("CRD %s is in file %s, want %s", crd.Name, e.Name(), want)
		}
	}
	inList := map[string]facts{}
	for _, k := range kinds.All() {
		inList[k.CRDName()] = fromList(k)
	}
	if diff := cmp.Diff(inFiles, inList); diff != "" {
		t.Errorf("kinds list against %s (-files +list):\n%s", crdDir, diff)
	}
}

// TestEveryKindIsRegistered checks the scheme knows every listed kind at every served version.
func TestEveryKindIsRegistered(t *testing.T) {
	s := apis.NewScheme()
	var missing []string
	for _, k := range kinds.All() {
		for _, gvr := range k.GVRs() {
			gvk := gvr.GroupVersion().WithKind(k.Kind)
			if !s.Recognizes(gvk) {
				missing = append(missing, gvk.String())
			}
			if !s.Recognizes(gvr.GroupVersion().WithKind(k.Kind + "List")) {
				missing = append(missing, gvk.String()+"List")
			}
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("listed kinds the scheme does not register (-want +got):\n%s", diff)
	}
}

func TestIsOurCRD(t *testing.T) {
	cases := map[string]struct {
		name string
		want bool
	}{
		"a CloneSet CRD is ours":                                 {name: "clonesets.apps.kruise.io", want: true},
		"a PodUnavailableBudget CRD is ours":                     {name: "podunavailablebudgets.policy.kruise.io", want: true},
		"a per-node NodeImage CRD is ours":                       {name: "nodeimages.apps.kruise.io", want: true},
		"a Rollout CRD of the same API family is not ours":       {name: "rollouts.rollouts.kruise.io", want: false},
		"a GameServerSet CRD of the same API family is not ours": {name: "gameserversets.game.kruise.io", want: false},
		"an unknown kind in our own group is not ours":           {name: "widgets.apps.kruise.io", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, kinds.IsOurCRD(tc.name)); diff != "" {
				t.Errorf("IsOurCRD(%q) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestUserCreated(t *testing.T) {
	var got []string
	for _, k := range kinds.UserCreated() {
		got = append(got, k.Kind)
	}
	want := []string{
		"AdvancedCronJob", "BroadcastJob", "CloneSet", "ContainerRecreateRequest", "DaemonSet", "EphemeralJob",
		"ImageListPullJob", "ImagePullJob", "PersistentPodState", "PodProbeMarker", "ResourceDistribution",
		"SidecarSet", "StatefulSet", "UnitedDeployment", "WorkloadSpread", "PodUnavailableBudget",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user-created kinds, without NodeImage and NodePodProbe (-want +got):\n%s", diff)
	}
}

// The ContainerRecreateRequest's finalizer in the list is the key the API package names.
func TestContainerRecreateRequestFinalizerIsTheAPIKey(t *testing.T) {
	k, ok := kinds.ByCRDName("containerrecreaterequests.apps.kruise.io")
	if !ok {
		t.Fatal("ContainerRecreateRequest is not in the list")
	}
	if diff := cmp.Diff([]string{appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey}, k.Finalizers); diff != "" {
		t.Errorf("finalizers (-api +list):\n%s", diff)
	}
}

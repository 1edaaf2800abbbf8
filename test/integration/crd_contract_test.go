package integration

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// crdContract is what users' manifests and tools depend on for one CRD.
type crdContract struct {
	kind       string
	shortNames []string
	scope      apiextensionsv1.ResourceScope
	versions   []string // served versions; the first is the storage version
	scale      bool     // has a scale subresource reading .status.labelSelector
}

// wireContract lists every CRD the add-on serves, as the 1.8 API defines it.
var wireContract = map[string]crdContract{
	"clonesets.apps.kruise.io":                 {kind: "CloneSet", shortNames: []string{"clone"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}, scale: true},
	"daemonsets.apps.kruise.io":                {kind: "DaemonSet", shortNames: []string{"daemon", "ads"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"ephemeraljobs.apps.kruise.io":             {kind: "EphemeralJob", shortNames: []string{"ejob"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"sidecarsets.apps.kruise.io":               {kind: "SidecarSet", scope: apiextensionsv1.ClusterScoped, versions: []string{"v1alpha1"}},
	"uniteddeployments.apps.kruise.io":         {kind: "UnitedDeployment", shortNames: []string{"ud"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}, scale: true},
	"workloadspreads.apps.kruise.io":           {kind: "WorkloadSpread", shortNames: []string{"ws"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"imagepulljobs.apps.kruise.io":             {kind: "ImagePullJob", scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"imagelistpulljobs.apps.kruise.io":         {kind: "ImageListPullJob", scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"nodeimages.apps.kruise.io":                {kind: "NodeImage", scope: apiextensionsv1.ClusterScoped, versions: []string{"v1alpha1"}},
	"containerrecreaterequests.apps.kruise.io": {kind: "ContainerRecreateRequest", shortNames: []string{"crr"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"broadcastjobs.apps.kruise.io":             {kind: "BroadcastJob", shortNames: []string{"bcj"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"advancedcronjobs.apps.kruise.io":          {kind: "AdvancedCronJob", shortNames: []string{"acj"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"resourcedistributions.apps.kruise.io":     {kind: "ResourceDistribution", shortNames: []string{"distributor"}, scope: apiextensionsv1.ClusterScoped, versions: []string{"v1alpha1"}},
	"persistentpodstates.apps.kruise.io":       {kind: "PersistentPodState", scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"podprobemarkers.apps.kruise.io":           {kind: "PodProbeMarker", scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
	"nodepodprobes.apps.kruise.io":             {kind: "NodePodProbe", scope: apiextensionsv1.ClusterScoped, versions: []string{"v1alpha1"}},
	"statefulsets.apps.kruise.io":              {kind: "StatefulSet", shortNames: []string{"sts", "asts"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1beta1", "v1alpha1"}, scale: true},
	"podunavailablebudgets.policy.kruise.io":   {kind: "PodUnavailableBudget", shortNames: []string{"pub"}, scope: apiextensionsv1.NamespaceScoped, versions: []string{"v1alpha1"}},
}

// generatedCRDNames reads the CRD names from the generated files the chart ships.
func generatedCRDNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(framework.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		names = append(names, crd.Name)
	}
	sort.Strings(names)
	return names
}

func TestGeneratedCRDsAreExactlyTheContract(t *testing.T) {
	var want []string
	for name := range wireContract {
		want = append(want, name)
	}
	sort.Strings(want)
	if d := cmp.Diff(want, generatedCRDNames(t)); d != "" {
		t.Errorf("CRDs in %s (-contract +generated):\n%s", framework.CRDDir(), d)
	}
}

func TestEveryCRDIsEstablishedWithItsContract(t *testing.T) {
	ctx := context.Background()
	for name, want := range wireContract {
		t.Run(name, func(t *testing.T) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := env.Client.Get(ctx, objectKey("", name), &crd); err != nil {
				t.Fatalf("get CRD: %v", err)
			}
			if !crdCondition(&crd, apiextensionsv1.Established) {
				t.Errorf("CRD is not Established: %+v", crd.Status.Conditions)
			}
			if !crdCondition(&crd, apiextensionsv1.NamesAccepted) {
				t.Errorf("CRD names are not accepted: %+v", crd.Status.Conditions)
			}
			plural := strings.SplitN(name, ".", 2)[0]
			got := crdContract{
				kind:       crd.Spec.Names.Kind,
				shortNames: crd.Spec.Names.ShortNames,
				scope:      crd.Spec.Scope,
			}
			if crd.Spec.Names.Plural != plural {
				t.Errorf("plural = %q, want %q", crd.Spec.Names.Plural, plural)
			}
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				if v.Storage {
					got.versions = append([]string{v.Name}, got.versions...)
				} else {
					got.versions = append(got.versions, v.Name)
				}
				if v.Subresources == nil || v.Subresources.Status == nil {
					t.Errorf("version %s has no status subresource", v.Name)
				}
				hasScale := v.Subresources != nil && v.Subresources.Scale != nil
				if hasScale != want.scale {
					t.Errorf("version %s: scale subresource = %v, want %v", v.Name, hasScale, want.scale)
				}
				if hasScale {
					s := v.Subresources.Scale
					if s.SpecReplicasPath != ".spec.replicas" || s.StatusReplicasPath != ".status.replicas" ||
						s.LabelSelectorPath == nil || *s.LabelSelectorPath != ".status.labelSelector" {
						t.Errorf("version %s: scale = %+v, want .spec.replicas/.status.replicas/.status.labelSelector", v.Name, s)
					}
				}
			}
			got.scale = want.scale // checked per version above
			if d := cmp.Diff(want, got, cmp.AllowUnexported(crdContract{})); d != "" {
				t.Errorf("contract (-want +got):\n%s", d)
			}
		})
	}
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == c {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

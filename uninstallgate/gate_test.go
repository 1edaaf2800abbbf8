package uninstallgate

import (
	"context"
	"strings"
	"testing"

	"encoding/json"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kruise-addon/kruise-addon/apis/kinds"
)

func obj(gvr schema.GroupVersionResource, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func listKinds() map[schema.GroupVersionResource]string {
	m := map[schema.GroupVersionResource]string{}
	for _, k := range kinds.UserCreated() {
		for _, gvr := range k.GVRs() {
			m[gvr] = k.Kind + "List"
		}
	}
	return m
}

var (
	cloneSets   = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}
	sidecarSets = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "sidecarsets"}
	stsBeta     = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1beta1", Resource: "statefulsets"}
)

func TestUserKinds(t *testing.T) {
	cases := map[string]struct {
		resource string
		want     bool
	}{
		"CloneSet is a user kind":                              {resource: "clonesets", want: true},
		"PodUnavailableBudget is a user kind":                  {resource: "podunavailablebudgets", want: true},
		"ContainerRecreateRequest is a user kind":              {resource: "containerrecreaterequests", want: true},
		"ResourceDistribution, cluster-scoped, is a user kind": {resource: "resourcedistributions", want: true},
		"PersistentPodState is a user kind":                    {resource: "persistentpodstates", want: true},
		"NodeImage is made by the manager, never listed":       {resource: "nodeimages", want: false},
		"NodePodProbe is made by the manager, never listed":    {resource: "nodepodprobes", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := false
			for _, gvr := range UserKinds() {
				if gvr.Resource == tc.resource {
					got = true
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(17, len(UserKinds())); diff != "" {
		t.Errorf("16 kinds with StatefulSet twice (-want +got):\n%s", diff)
	}
}

func TestRemaining(t *testing.T) {
	cases := map[string]struct {
		objects []runtime.Object
		want    []KindCount
	}{
		"an empty cluster has nothing remaining": {},
		"CloneSets are counted per kind with their namespaces": {
			objects: []runtime.Object{obj(cloneSets, "CloneSet", "b", "web"), obj(cloneSets, "CloneSet", "a", "api"), obj(cloneSets, "CloneSet", "a", "db")},
			want:    []KindCount{{Kind: "CloneSet", Resource: cloneSets, Namespaced: true, Count: 3, Namespaces: []string{"a", "b"}}},
		},
		"a cluster-scoped SidecarSet has no namespaces": {
			objects: []runtime.Object{obj(sidecarSets, "SidecarSet", "", "log")},
			want:    []KindCount{{Kind: "SidecarSet", Resource: sidecarSets, Count: 1}},
		},
		"a StatefulSet is counted once although two versions serve it": {
			objects: []runtime.Object{obj(stsBeta, "StatefulSet", "a", "db")},
			want:    []KindCount{{Kind: "StatefulSet", Resource: stsBeta, Namespaced: true, Count: 1, Namespaces: []string{"a"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds(), tc.objects...)
			got, err := Remaining(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("remaining (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	cases := map[string]struct {
		in           []KindCount
		wantContains []string
	}{
		"nothing remaining says nothing": {wantContains: []string{""}},
		"namespaced kinds name their namespaces and an all-namespaces delete": {
			in:           []KindCount{{Kind: "CloneSet", Resource: cloneSets, Namespaced: true, Count: 2, Namespaces: []string{"a", "b"}}},
			wantContains: []string{"CloneSet: 2 in namespace(s) a, b", "kubectl delete clonesets.apps.kruise.io --all --all-namespaces"},
		},
		"cluster-scoped kinds get a plain delete": {
			in:           []KindCount{{Kind: "SidecarSet", Resource: sidecarSets, Count: 1}},
			wantContains: []string{"SidecarSet: 1 cluster-scoped", "kubectl delete sidecarsets.apps.kruise.io --all\n"},
		},
		"a kind the manager finalizes is deleted without waiting, and held objects are named": {
			in: []KindCount{{Kind: "ImagePullJob", Resource: schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "imagepulljobs"},
				Namespaced: true, Count: 2, Namespaces: []string{"a"}, Finalizers: []string{"apps.kruise.io/deletion-protection"}, Held: 1}},
			wantContains: []string{"ImagePullJob: 2 in namespace(s) a (1 being deleted, waiting for the manager to remove apps.kruise.io/deletion-protection)",
				"kubectl delete imagepulljobs.apps.kruise.io --all --all-namespaces --wait=false\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Describe(tc.in) + "\n"
			var missing []string
			for _, w := range tc.wantContains {
				if !strings.Contains(got, w) {
					missing = append(missing, w)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("missing from %q (-want +got):\n%s", got, diff)
			}
		})
	}
}

// The JSON of a count names the resource's fields in lower case, as the API document does, and
// reads back the same.
func TestKindCountJSONNamesTheResourceInLowerCase(t *testing.T) {
	in := KindCount{Kind: "CloneSet", Resource: cloneSets, Namespaced: true, Count: 2, Namespaces: []string{"a"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"resource":{"group":"apps.kruise.io","version":"v1alpha1","resource":"clonesets"}`; !strings.Contains(string(b), want) {
		t.Errorf("JSON %s lacks %s", b, want)
	}
	var out KindCount
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
}

package placement

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func controlled(apiVersion, kind, name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: ptr.To(true)}
}

func TestFinderForPod(t *testing.T) {
	rsOfWeb := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{controlled("apps/v1", "Deployment", "web")}}}
	rsOfAPI := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "api-abc", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{controlled("apps/v1", "Deployment", "api")}}}
	spreads := []client.Object{
		kinds.WorkloadSpread("ws-clone", "ns").Target("apps.kruise.io/v1alpha1", "CloneSet", "web").ZoneSubset("a", "zone-a", "").Obj(),
		kinds.WorkloadSpread("ws-deploy", "ns").Target("apps/v1", "Deployment", "web").ZoneSubset("a", "zone-a", "").Obj(),
		func() client.Object {
			ws := kinds.WorkloadSpread("ws-job", "ns").Target("batch/v1", "Job", "batch").ZoneSubset("a", "zone-a", "").Obj()
			ws.Spec.TargetFilter = &appsv1alpha1.TargetFilter{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}}
			return ws
		}(),
	}
	pod := func(owner metav1.OwnerReference, labels map[string]string) *corev1.Pod {
		return builder.Pod("p", "ns").Labels(labels).OwnedBy(owner).Obj()
	}
	type tcase struct {
		pod  *corev1.Pod
		want string
	}
	cases := map[string]tcase{
		"a CloneSet's pod is spread by the WorkloadSpread naming the CloneSet": {
			pod: pod(controlled("apps.kruise.io/v1alpha1", "CloneSet", "web"), nil), want: "ws-clone"},
		"a Deployment's pod is found through its ReplicaSet": {
			pod: pod(controlled("apps/v1", "ReplicaSet", "web-abc"), nil), want: "ws-deploy"},
		"a Deployment's pod is found through a ReplicaSet the cache has not seen yet": {
			pod: pod(controlled("apps/v1", "ReplicaSet", "web-new"), nil), want: "ws-deploy"},
		"a ReplicaSet of another Deployment is not": {
			pod: pod(controlled("apps/v1", "ReplicaSet", "api-abc"), nil)},
		"the same name of another kind is not": {
			pod: pod(controlled("apps.kruise.io/v1alpha1", "DaemonSet", "web"), nil)},
		"a pod the targetFilter selects is spread": {
			pod: pod(controlled("batch/v1", "Job", "batch"), map[string]string{"role": "worker"}), want: "ws-job"},
		"a pod the targetFilter leaves out is not": {
			pod: pod(controlled("batch/v1", "Job", "batch"), map[string]string{"role": "driver"})},
		"a pod without a controller is not": {
			pod: builder.Pod("p", "ns").Obj()},
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(append(spreads, rsOfWeb, rsOfAPI)...).Build()
	// live holds a ReplicaSet the cache has not seen yet.
	live := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-new", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{controlled("apps/v1", "Deployment", "web")}}}).Build()
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		ws, err := Finder{Client: c, Live: live}.ForPod(context.Background(), tc.pod)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if ws != nil {
			got = ws.Name
		}
		testkit.Diff(t, "workloadspread", tc.want, got)
	})
}

// TestFinderReadsAPodsReplicaSetOnceWhateverTheWorkloadSpreads: a Deployment's pod whose
// ReplicaSet the cache has not seen yet costs one read from the apiserver, not one for each
// WorkloadSpread of the namespace that points at another Deployment.
func TestFinderReadsAPodsReplicaSetOnceWhateverTheWorkloadSpreads(t *testing.T) {
	var spreads []client.Object
	for _, d := range []string{"api", "db", "cache", "web"} {
		spreads = append(spreads, kinds.WorkloadSpread("ws-"+d, "ns").Target("apps/v1", "Deployment", d).ZoneSubset("a", "zone-a", "").Obj())
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(spreads...).Build()
	live := &webhooktest.CountingReader{Reader: fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(&appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-new", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{controlled("apps/v1", "Deployment", "web")}}}).Build()}
	ws, err := Finder{Client: c, Live: live}.ForPod(context.Background(), builder.Pod("p", "ns").OwnedBy(controlled("apps/v1", "ReplicaSet", "web-new")).Obj())
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	if ws != nil {
		got = ws.Name
	}
	testkit.Diff(t, "workloadspread", "ws-web", got)
	testkit.Diff(t, "reads from the apiserver", 1, live.Reads)
}

func TestTargetReplicas(t *testing.T) {
	objs := []client.Object{
		kinds.CloneSet("web", "ns").Replicas(5).Obj(),
		builder.Job("batch", "ns").Parallelism(4).Obj(),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns"}},
	}
	cache := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(objs...).Build()
	// live holds what the cache has not seen yet.
	live := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "ns"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](6)}},
		kinds.CloneSet("web", "ns").Replicas(9).Obj(),
	).Build()
	spreadOver := func(apiVersion, kind, name string, paths ...string) *appsv1alpha1.WorkloadSpread {
		ws := kinds.WorkloadSpread("ws", "ns").Target(apiVersion, kind, name).Obj()
		if len(paths) > 0 {
			ws.Spec.TargetFilter = &appsv1alpha1.TargetFilter{ReplicasPathList: paths}
		}
		return ws
	}
	type tcase struct {
		ws        *appsv1alpha1.WorkloadSpread
		readers   []client.Reader
		want      int32
		wantFound bool
	}
	cases := map[string]tcase{
		"a CloneSet's replicas": {
			ws: spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web"), readers: []client.Reader{cache}, want: 5, wantFound: true},
		"a Job's parallelism": {
			ws: spreadOver("batch/v1", "Job", "batch"), readers: []client.Reader{cache}, want: 4, wantFound: true},
		"unset replicas are the API default of 1": {
			ws: spreadOver("apps/v1", "Deployment", "bare"), readers: []client.Reader{cache}, want: 1, wantFound: true},
		"a missing target is not found": {
			ws: spreadOver("apps/v1", "Deployment", "gone"), readers: []client.Reader{cache, live}},
		"replicasPathList sums the paths it names": {
			ws: spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web", "spec.replicas", "spec.replicas"), readers: []client.Reader{cache}, want: 10, wantFound: true},
		"a kind no WorkloadSpread may target is not found": {
			ws: spreadOver("apps/v1", "DaemonSet", "web"), readers: []client.Reader{cache}},
		"a target the cache has not seen yet is read from the next reader": {
			ws: spreadOver("apps/v1", "Deployment", "new"), readers: []client.Reader{cache, live}, want: 6, wantFound: true},
		"the first reader that has the target answers": {
			ws: spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web"), readers: []client.Reader{cache, live}, want: 5, wantFound: true},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		f := Finder{Client: tc.readers[0]}
		if len(tc.readers) > 1 {
			f.Live = tc.readers[1]
		}
		got, found, err := f.TargetReplicas(context.Background(), tc.ws)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "replicas", tc.want, got)
		if found != tc.wantFound {
			t.Errorf("found = %v, want %v", found, tc.wantFound)
		}
	})
}

func TestPodOwnersAreTheTargetOrItsReplicaSets(t *testing.T) {
	cs := kinds.CloneSet("web", "ns").Obj()
	cs.UID = "cs-uid"
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "ns", UID: "dep-uid"}}
	rs := func(name string, uid types.UID, owner string, ownerUID types.UID) *appsv1.ReplicaSet {
		ref := controlled("apps/v1", "Deployment", owner)
		ref.UID = ownerUID
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid, OwnerReferences: []metav1.OwnerReference{ref}}}
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(cs, dep,
		rs("api-1", "rs-1", "api", "dep-uid"), rs("api-2", "rs-2", "api", "dep-uid"),
		rs("other-1", "rs-3", "other", "other-uid"),
		// A ReplicaSet of an earlier Deployment of the same name is not the target's.
		rs("api-0", "rs-0", "api", "old-dep-uid"),
	).Build()
	cases := map[string]struct {
		ws        *appsv1alpha1.WorkloadSpread
		want      []types.UID
		wantKnown bool
	}{
		"a CloneSet controls its pods": {
			ws: kinds.WorkloadSpread("ws", "ns").Target("apps.kruise.io/v1alpha1", "CloneSet", "web").Obj(), want: []types.UID{"cs-uid"}, wantKnown: true},
		"a Deployment's pods are its ReplicaSets'": {
			ws: kinds.WorkloadSpread("ws", "ns").Target("apps/v1", "Deployment", "api").Obj(), want: []types.UID{"rs-1", "rs-2"}, wantKnown: true},
		"a missing target leaves every pod possible": {
			ws: kinds.WorkloadSpread("ws", "ns").Target("apps.kruise.io/v1alpha1", "CloneSet", "gone").Obj()},
		"a custom target leaves every pod possible": {
			ws: kinds.WorkloadSpread("ws", "ns").Target("example.com/v1", "GameServerSet", "gs").Obj()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := Finder{Client: c}
			target, err := f.Target(context.Background(), tc.ws)
			if err != nil {
				t.Fatal(err)
			}
			got, known, err := f.PodOwners(context.Background(), tc.ws, target)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			testkit.Diff(t, "known", tc.wantKnown, known)
			testkit.Diff(t, "owners", tc.want, got)
		})
	}
}

package workloadref

import (
	"context"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func controller(apiVersion, kind, name, uid string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: ktypes.UID(uid), Controller: ptr.To(true)}}
}

// run is a custom workload of the whitelist below, controlling the ReplicaSet run-rs.
func run() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{"spec": map[string]interface{}{"size": int64(7)}}}
	u.SetAPIVersion("example.io/v1")
	u.SetKind("Run")
	u.SetName("run")
	u.SetNamespace("ns")
	u.SetUID("run-uid")
	return u
}

var runs = &Whitelist{Workloads: []CustomWorkload{{GroupVersionKind: schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Run"},
	SubResources: []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "ReplicaSet"}}, ReplicasPath: "spec.size"}}}

func newFinder(t *testing.T) Finder {
	t.Helper()
	cache := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "web-uid"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", UID: "rs-uid", OwnerReferences: controller("apps/v1", "Deployment", "web", "web-uid")}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "run-rs", Namespace: "ns", OwnerReferences: controller("example.io/v1", "Run", "run", "run-uid")}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}},
		run(),
	).Build()
	live := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "ns", OwnerReferences: controller("apps/v1", "Deployment", "web", "web-uid")}},
	).Build()
	return Finder{Readers: []client.Reader{cache, nil, live}, Custom: func(context.Context) (*Whitelist, error) { return runs, nil }}
}

func TestFinderGet(t *testing.T) {
	type want struct {
		Found    bool
		Replicas int32
	}
	type tcase struct {
		ref  Ref
		want want
	}
	cases := map[string]tcase{
		"a Deployment's replicas are its spec.replicas":                {ref: Ref{"apps/v1", "Deployment", "web"}, want: want{true, 3}},
		"unset replicas are the API default of 1":                      {ref: Ref{"apps/v1", "StatefulSet", "db"}, want: want{true, 1}},
		"a workload the first reader lacks is read from the next":      {ref: Ref{"apps/v1", "ReplicaSet", "web-2"}, want: want{true, 1}},
		"a missing workload is not found":                              {ref: Ref{"apps/v1", "Deployment", "gone"}},
		"a kind neither built in nor whitelisted is not read":          {ref: Ref{"apps/v1", "DaemonSet", "web"}},
		"a whitelisted custom workload's replicas are at replicasPath": {ref: Ref{"example.io/v1", "Run", "run"}, want: want{true, 7}},
	}
	f := newFinder(t)
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		w, err := f.Get(context.Background(), "ns", tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		got := want{Found: w != nil}
		if w != nil {
			got.Replicas = w.Replicas
		}
		if got != tc.want {
			t.Errorf("got %+v, want %+v", got, tc.want)
		}
	})
}

func TestFinderControls(t *testing.T) {
	pod := func(apiVersion, kind, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: controller(apiVersion, kind, name, "")}}
	}
	type tcase struct {
		target Ref
		pod    *corev1.Pod
		via    Kinds
		want   bool
	}
	cases := map[string]tcase{
		"the pod's controller is the target, whatever its version": {target: Ref{"apps.kruise.io/v1beta1", "StatefulSet", "db"},
			pod: pod("apps.kruise.io/v1alpha1", "StatefulSet", "db"), want: true},
		"a Deployment controls its ReplicaSet's pod": {target: Ref{"apps/v1", "Deployment", "web"},
			pod: pod("apps/v1", "ReplicaSet", "web-1"), via: KindsOf(ReplicaSet), want: true},
		"an owner of a kind not climbed is not read": {target: Ref{"apps/v1", "Deployment", "web"},
			pod: pod("apps/v1", "ReplicaSet", "web-1")},
		"another Deployment does not": {target: Ref{"apps/v1", "Deployment", "api"},
			pod: pod("apps/v1", "ReplicaSet", "web-1"), via: KindsOf(ReplicaSet)},
		"a custom workload controls the pods of its sub-resource": {target: Ref{"example.io/v1", "Run", "run"},
			pod: pod("apps/v1", "ReplicaSet", "run-rs"), via: runs.Kinds(), want: true},
	}
	f := newFinder(t)
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, err := f.Controls(context.Background(), "ns", tc.target, metav1.GetControllerOf(tc.pod), tc.via)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Controls = %v, want %v", got, tc.want)
		}
	})
}

func TestControllerOfClimbsFromAReplicaSetToItsDeployment(t *testing.T) {
	w, err := newFinder(t).ControllerOf(context.Background(), "ns", &controller("apps/v1", "ReplicaSet", "web-1", "rs-uid")[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := (Ref{"apps/v1", "Deployment", "web"}); w.Ref != want {
		t.Errorf("ControllerOf = %+v, want %+v", w.Ref, want)
	}
}

func TestWorkloadSpreadWhitelist(t *testing.T) {
	cm := func(value string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: "kruise-system"},
			Data: map[string]string{WorkloadSpreadWhitelistKey: value}}
	}
	type tcase struct {
		objs      []client.Object
		wantKinds Kinds
		wantErr   bool
	}
	cases := map[string]tcase{
		"no ConfigMap whitelists nothing": {wantKinds: Kinds{}},
		"a workload and its sub-resources are read, keys in any case": {
			objs:      []client.Object{cm(`{"workloads":[{"Group":"example.io","version":"v1","kind":"Run","subResources":[{"group":"apps","Kind":"ReplicaSet"}]}]}`)},
			wantKinds: KindsOf(ReplicaSet, schema.GroupKind{Group: "example.io", Kind: "Run"})},
		"a value that is not the whitelist's JSON is an error": {objs: []client.Object{cm(`workloads: []`)}, wantErr: true},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(tc.objs...).Build()
		w, err := Config{Reader: c, Namespace: "kruise-system"}.WorkloadSpreadWhitelist(context.Background())
		if (err != nil) != tc.wantErr {
			t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
		}
		if err == nil {
			if got := w.Kinds(); !maps.Equal(got, tc.wantKinds) {
				t.Errorf("kinds = %v, want %v", got, tc.wantKinds)
			}
		}
	})
}

func TestSpecReplicas(t *testing.T) {
	type want struct {
		Replicas int32
		OK       bool
	}
	type tcase struct {
		obj  client.Object
		want want
	}
	cases := map[string]tcase{
		"a Deployment's spec.replicas":         {obj: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4)}}, want: want{4, true}},
		"a Job's spec.parallelism":             {obj: &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2)}}, want: want{2, true}},
		"unset replicas are not read":          {obj: &appsv1.StatefulSet{}},
		"a kind that is not built in has none": {obj: &appsv1.DaemonSet{}},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		var got want
		got.Replicas, got.OK = SpecReplicas(tc.obj)
		if got != tc.want {
			t.Errorf("got %+v, want %+v", got, tc.want)
		}
	})
}

func TestPersistentPodStateWhitelist(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: "kruise-system"},
		Data: map[string]string{
			PersistentPodStateWhitelistKey: `{"workloads":[{"Group":"example.io","Version":"v1","Kind":"StatefulRun"}]}`,
			WorkloadSpreadWhitelistKey:     `{"workloads":[{"Group":"example.io","Version":"v1","Kind":"Run"}]}`,
		}}).Build()
	w, err := Config{Reader: c, Namespace: "kruise-system"}.PersistentPodStateWhitelist(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := &Whitelist{Workloads: []CustomWorkload{{GroupVersionKind: schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "StatefulRun"}, ReplicasPath: "spec.replicas"}}}
	testkit.Diff(t, "whitelist of its own key, replicas at spec.replicas", want, w)
}

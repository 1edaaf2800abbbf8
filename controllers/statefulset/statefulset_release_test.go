package statefulset

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podowner"
)

// The pods a reconcile reads are the informer cache's own objects, listed without a copy, so
// releasing one must write through a copy: Patch decodes the apiserver's answer into the object
// it is given.
func TestReleaseLeavesThePodItIsGivenAsItWas(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	set := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "ss", Namespace: "ns", UID: "set-uid"}}
	stored := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "ss-0", Namespace: "ns", UID: "pod-uid", Labels: map[string]string{"app": "elsewhere"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, controllerKind)},
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).Build()
	ctx := context.Background()
	listed := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), listed); err != nil {
		t.Fatal(err)
	}
	before := listed.DeepCopy()

	r := &Reconciler{Base: podowner.Base{Client: c}}
	if err := r.release(ctx, set, listed); err != nil {
		t.Fatalf("release: %v", err)
	}

	if !equality.Semantic.DeepEqual(before, listed) {
		t.Errorf("release changed the pod it was given:\n%s", diff.ObjectGoPrintSideBySide(before, listed))
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), got); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(got); ref != nil {
		t.Errorf("pod still has controller %v after release", ref)
	}
}

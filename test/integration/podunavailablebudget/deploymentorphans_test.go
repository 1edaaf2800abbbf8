package podunavailablebudget

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestPodsOfADeletedDeploymentAreNotProtected checks a budget counts no replica for the pods of
// a ReplicaSet whose Deployment is gone, as in 1.8: the garbage collector deletes the Deployment
// first and the ReplicaSet and its pods after, and those deletions must go through although the
// budget (maxUnavailable 0) refused the same deletion while the Deployment stood. No garbage
// collector runs here, so the ReplicaSet stays orphaned as it is for a moment in a cluster.
func TestPodsOfADeletedDeploymentAreNotProtected(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-orphan-rs-", nil)
	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: builder.DefaultImage}}},
	}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: selector, Template: template}}
	framework.Create(t, env.Client, dep)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{builder.ControllerRef("apps/v1", "Deployment", dep)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: selector, Template: template}}
	framework.Create(t, env.Client, rs)
	pod := builder.Pod("web-1-a", ns).Label("app", "web").TerminationGracePeriod(0).
		OwnedBy(builder.ControllerRef("apps/v1", "ReplicaSet", rs)).Obj()
	framework.Create(t, env.Client, pod)
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(0), 0))
	waitRelated(t, ns, "web", pod.Name)
	waitStatus(t, ns, "web", statusNumbers{Total: 1, Desired: 1, Current: 1, Allowed: 0})
	ctx := context.Background()
	if err := deletePod(ctx, ns, pod.Name, client.DryRunAll); err == nil {
		t.Fatalf("deleting %s while its Deployment stands was let through; the budget has no room", pod.Name)
	}

	if err := env.Client.Delete(ctx, dep); err != nil {
		t.Fatalf("delete the Deployment: %v", err)
	}
	waitStatus(t, ns, "web", statusNumbers{Total: 0, Desired: 0, Current: 1, Allowed: 1})
	if err := deletePod(ctx, ns, pod.Name); err != nil {
		t.Fatalf("delete %s, as the garbage collector does: %v", pod.Name, err)
	}
}

package protection

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func deployment(name, ns string, replicas int32, protection string) *appsv1.Deployment {
	b := builder.Deployment(name, ns).Replicas(replicas).Image("registry.example.com/web:1")
	if protection != "" {
		b = b.Label(deletionprotection.Label, protection)
	}
	return b.Obj()
}

// refused deletes obj and returns the refusal, failing t if the deletion went through.
func refused(t *testing.T, obj client.Object) string {
	t.Helper()
	err := env.Client.Delete(context.Background(), obj)
	if err == nil {
		t.Fatalf("deleting %T %s went through, want it refused", obj, obj.GetName())
	}
	return err.Error()
}

// setLabel sets or (with "") removes the protection label on obj.
func setLabel(t *testing.T, obj client.Object, value string) {
	t.Helper()
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	if value == "" {
		delete(labels, deletionprotection.Label)
	} else {
		labels[deletionprotection.Label] = value
	}
	obj.SetLabels(labels)
	if err := env.Client.Patch(context.Background(), obj, patch); err != nil {
		t.Fatalf("set the protection label: %v", err)
	}
}

// wantMessage checks a refusal: its text starts with start, the words clients written for
// OpenKruise 1.8 match ("forbidden by ResourcesProtectionDeletion for <label>=<value>" and 1.8's
// reason), right after the apiserver's "denied the request: ", and says each of parts.
func wantMessage(t *testing.T, msg, start string, parts ...string) {
	t.Helper()
	if !strings.Contains(msg, "denied the request: "+start) {
		t.Errorf("refusal %q does not start with %q", msg, start)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("refusal %q does not say %q", msg, p)
		}
	}
}

func TestAlwaysRefusesDeletingADeploymentUntilTheLabelIsRemoved(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "protect-always-", nil)
	d := deployment("web", ns, 0, deletionprotection.Always)
	framework.Create(t, env.Client, d)
	wantMessage(t, refused(t, d), "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always;", "Deployment "+ns+"/web", "remove the label")
	setLabel(t, d, "")
	if err := env.Client.Delete(context.Background(), d); err != nil {
		t.Fatalf("delete after the label went: %v", err)
	}
}

func TestCascadingRefusesDeletingAWorkloadWhileItHasReplicas(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "protect-cascading-", nil)
	d := deployment("web", ns, 2, deletionprotection.Cascading)
	framework.Create(t, env.Client, d)
	wantMessage(t, refused(t, d), "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0;", "Deployment "+ns+"/web", "scale it to 0")

	cs := kinds.CloneSet("clone", ns).Replicas(3).Obj()
	cs.Labels = map[string]string{deletionprotection.Label: deletionprotection.Cascading}
	framework.Create(t, env.Client, cs)
	wantMessage(t, refused(t, cs), "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0;", "CloneSet "+ns+"/clone")

	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](0)
	if err := env.Client.Patch(context.Background(), d, patch); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(context.Background(), d); err != nil {
		t.Fatalf("delete at 0 replicas: %v", err)
	}
}

func TestCascadingRefusesDeletingANamespaceWhileItHasActivePods(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "protect-ns-", map[string]string{deletionprotection.Label: deletionprotection.Cascading})
	pod := builder.Pod("p", ns).Obj()
	framework.Create(t, env.Client, pod)
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	wantMessage(t, refused(t, nsObj), "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 1>0;", "Namespace "+ns)

	// A pod that never reached a node goes at once.
	if err := env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.Medium, "the namespace's deletion is let through", func(ctx context.Context) error {
		return env.Client.Delete(ctx, nsObj)
	})
}

func TestServicesKnowOnlyAlways(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "protect-svc-", nil)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{deletionprotection.Label: deletionprotection.Always}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	framework.Create(t, env.Client, svc)
	wantMessage(t, refused(t, svc), "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always;", "Service "+ns+"/web")
	setLabel(t, svc, deletionprotection.Cascading)
	if err := env.Client.Delete(context.Background(), svc); err != nil {
		t.Fatalf("a Service labelled Cascading must be deletable: %v", err)
	}
}

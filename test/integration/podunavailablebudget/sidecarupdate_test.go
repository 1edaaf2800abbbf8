package podunavailablebudget

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestAPodWhoseSidecarUpdateHasNotTakenEffectStaysUnavailable checks a pod whose in-place
// sidecar upgrade has not taken effect stays unavailable to its budget after its
// unavailablePods record expires, as in 1.8: the spec asks for the new sidecar image while the
// status still reports the old container Ready (its node's kubelet has not acted yet, as while
// an old container takes its grace period to stop). So with maxUnavailable 1, the SidecarSet's
// upgrade of the second pod to an image no node can pull is refused, and stays refused.
func TestAPodWhoseSidecarUpdateHasNotTakenEffectStaysUnavailable(t *testing.T) {
	ctx := context.Background()
	ns := framework.NewNamespace(t, env.Client, "pub-sidecar-", nil)
	const node = "node-0"
	set := &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: appsv1alpha1.SidecarSetSpec{
			Namespace:      ns,
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers:     []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "agent", Image: "agent:1"}}},
			UpdateStrategy: appsv1alpha1.SidecarSetUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(2))},
		},
	}
	framework.CreateForTest(t, env.Client, set)
	var pods []string
	for i := range 2 {
		name := fmt.Sprintf("web-%d", i)
		framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "web").Node(node).TerminationGracePeriod(0).Obj())
		pods = append(pods, name)
	}
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(1), 2))
	waitRelated(t, ns, "web", pods...)
	waitStatus(t, ns, "web", statusNumbers{Total: 2, Desired: 1, Current: 2, Allowed: 1})

	// The kubelet of the pods' node stops reporting: what it last wrote stays.
	if err := sim.SetNodeReady(ctx, node, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetNodeReady(context.Background(), node, true) })

	framework.Change(t, env.Client, client.ObjectKey{Name: set.Name}, func(s *appsv1alpha1.SidecarSet) {
		s.Spec.Containers[0].Image = "agent:" + framework.UnpullableTag
	})
	var first, second string
	framework.Eventually(t, framework.Medium, "one pod's sidecar is upgraded", func(ctx context.Context) error {
		first, second = "", ""
		for _, name := range pods {
			if sidecarImage(ctx, ns, name) == "agent:"+framework.UnpullableTag {
				first = name
			} else {
				second = name
			}
		}
		if first == "" {
			return fmt.Errorf("no pod upgraded yet")
		}
		return nil
	})
	if second == "" {
		t.Fatalf("both pods' sidecars were upgraded at once; the budget allows one")
	}

	framework.Eventually(t, framework.Medium, "the upgraded pod's record expires and it stays unavailable", func(ctx context.Context) error {
		pub := &policyv1alpha1.PodUnavailableBudget{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pub); err != nil {
			return err
		}
		if len(pub.Status.UnavailablePods) > 0 {
			return fmt.Errorf("unavailablePods %v still recorded", pub.Status.UnavailablePods)
		}
		if got, want := numbers(pub), (statusNumbers{Total: 2, Desired: 1, Current: 1, Allowed: 0}); got != want {
			return fmt.Errorf("status %+v, want %+v", got, want)
		}
		return nil
	})

	p := framework.Get[corev1.Pod](t, env.Client, client.ObjectKey{Namespace: ns, Name: second})
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == "agent" {
			p.Spec.Containers[i].Image = "agent:" + framework.UnpullableTag
		}
	}
	if err := env.Client.Update(ctx, p, client.DryRunAll); err == nil {
		t.Fatalf("upgrading %s's sidecar was let through while %s's upgrade has not taken effect", second, first)
	}
	framework.Consistently(t, framework.Short, "the SidecarSet leaves the second pod's sidecar alone", func(ctx context.Context) error {
		if got := sidecarImage(ctx, ns, second); got != "agent:1" {
			return fmt.Errorf("pod %s's sidecar runs %q", second, got)
		}
		return nil
	})
}

// sidecarImage is the image the named pod's spec asks of its "agent" container ("" when the
// pod cannot be read).
func sidecarImage(ctx context.Context, ns, name string) string {
	p := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		return ""
	}
	for _, c := range p.Spec.Containers {
		if c.Name == "agent" {
			return c.Image
		}
	}
	return ""
}

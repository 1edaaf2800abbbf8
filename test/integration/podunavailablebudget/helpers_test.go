package podunavailablebudget

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// budgetByLabel is a budget selecting app=<app> with maxUnavailable; total, when not zero, is
// its pub.kruise.io/protect-total-replicas, so that bare pods leaving do not shrink the budget.
func budgetByLabel(ns, name, app string, maxUnavailable intstr.IntOrString, total int) *policyv1alpha1.PodUnavailableBudget {
	pub := &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			MaxUnavailable: &maxUnavailable,
		},
	}
	if total > 0 {
		pub.Annotations = map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: strconv.Itoa(total)}
	}
	return pub
}

// guardedPods creates n Ready bare pods app=web in ns, annotated with annotate, and a budget
// "web" over them with maxUnavailable and protect-total-replicas n, and waits until every pod
// names the budget and its status counts them all, maxUnavailable of them allowed to go. It
// returns the pods' names and the budget.
func guardedPods(t *testing.T, ns string, n int, maxUnavailable int32, annotate map[string]string) ([]string, *policyv1alpha1.PodUnavailableBudget) {
	t.Helper()
	pods := readyBarePods(t, ns, "web", n, annotate)
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(maxUnavailable), n))
	waitRelated(t, ns, "web", pods...)
	total := int32(n)
	return pods, waitStatus(t, ns, "web", statusNumbers{Total: total, Desired: total - maxUnavailable, Current: total, Allowed: maxUnavailable})
}

// readyBarePods creates n pods app=<app> named <app>-0..n-1 and waits until all are Ready.
func readyBarePods(t *testing.T, ns, app string, n int, annotate map[string]string) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", app, i)
		framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", app).Annotations(annotate).TerminationGracePeriod(0).Obj())
		names = append(names, name)
	}
	framework.WaitPodsReady(t, env.Client, ns, framework.Medium, names...)
	return names
}

// statusNumbers is the part of a budget's status the tests compare.
type statusNumbers struct{ Allowed, Current, Desired, Total int32 }

func numbers(pub *policyv1alpha1.PodUnavailableBudget) statusNumbers {
	s := pub.Status
	return statusNumbers{Allowed: s.UnavailableAllowed, Current: s.CurrentAvailable, Desired: s.DesiredAvailable, Total: s.TotalReplicas}
}

// waitStatus waits until the budget's status, for its current generation, has want.
func waitStatus(t *testing.T, ns, name string, want statusNumbers) *policyv1alpha1.PodUnavailableBudget {
	t.Helper()
	pub := &policyv1alpha1.PodUnavailableBudget{}
	framework.Eventually(t, framework.Medium, fmt.Sprintf("budget %s status %+v", name, want), func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pub); err != nil {
			return err
		}
		if pub.Status.ObservedGeneration != pub.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", pub.Status.ObservedGeneration, pub.Generation)
		}
		if got := numbers(pub); got != want {
			return fmt.Errorf("status %+v", got)
		}
		return nil
	})
	return pub
}

// waitRelated waits until every named pod carries the budget's related-pub annotation, which
// the pod webhook checks by.
func waitRelated(t *testing.T, ns, pub string, pods ...string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, "the pods name their budget", func(ctx context.Context) error {
		for _, name := range pods {
			p := &corev1.Pod{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
				return err
			}
			if got := p.Annotations[policyv1alpha1.PodRelatedPubAnnotation]; got != pub {
				return fmt.Errorf("pod %s related-pub %q", name, got)
			}
		}
		return nil
	})
}

func deletePod(ctx context.Context, ns, name string, opts ...client.DeleteOption) error {
	return env.Client.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, opts...)
}

package podunavailablebudget

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestStatusNumbers: PodUnavailableBudget selector pods, status counts the desired, available
// and allowed pods, and a running pod that is not ready is not available.
func TestStatusNumbers(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-status-", nil)
	readyBarePods(t, ns, "web", 3, nil)
	// A fourth pod runs but is kept not ready, before any budget exists, so the budget's first
	// status already has to tell it apart.
	framework.Create(t, env.Client, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-3", Namespace: ns, Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{framework.AnnotationNotReady: "true"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1"}}, TerminationGracePeriodSeconds: ptr.To[int64](0)},
	})
	p := &corev1.Pod{}
	framework.Eventually(t, framework.Medium, "pod web-3 runs", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-3"}, p); err != nil {
			return err
		}
		return framework.Want(p.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %q", p.Status.Phase))
	})
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromString("25%"), 0))
	// 4 desired, 25% rounded up is 1 unavailable: 3 must stay available; 3 are.
	waitStatus(t, ns, "web", statusNumbers{Total: 4, Desired: 3, Current: 3, Allowed: 0})
	waitRelated(t, ns, "web", "web-0", "web-1", "web-2", "web-3")

	framework.Create(t, env.Client, budgetByLabel(ns, "none", "nothing-matches", intstr.FromInt32(1), 0))
	waitStatus(t, ns, "none", statusNumbers{})

	// Once web-3 is ready there is room for one.
	framework.Eventually(t, framework.Short, "pod web-3 made ready", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-3"}, p); err != nil {
			return err
		}
		delete(p.Annotations, framework.AnnotationNotReady)
		return env.Client.Update(ctx, p)
	})
	waitStatus(t, ns, "web", statusNumbers{Total: 4, Desired: 3, Current: 4, Allowed: 1})
}

// TestDeletionRefusedBeyondMaxUnavailable: PodUnavailableBudget selector pods, delete pods
// beyond maxUnavailable are refused, and the allowed one is recorded in disruptedPods.
func TestDeletionRefusedBeyondMaxUnavailable(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-delete-", nil)
	pods, _ := guardedPods(t, ns, 3, 1, nil)

	ctx := context.Background()
	refusedBeyondBudget(t, "delete", pods, func(name string) error { return deletePod(ctx, ns, name) })
	p := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pods[1]}, p); err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("pod %s after the refused deletion: err %v, deletionTimestamp %v", pods[1], err, p.DeletionTimestamp)
	}
	waitStatus(t, ns, "web", statusNumbers{Total: 3, Desired: 2, Current: 2, Allowed: 0})
}

// TestEvictionRefused: PodUnavailableBudget selector pods, evict pods beyond maxUnavailable are
// refused the way 1.8 refuses them: 403 Forbidden from the webhook.
func TestEvictionRefused(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-evict-", nil)
	pods, _ := guardedPods(t, ns, 2, 1, nil)

	ctx := context.Background()
	evict := func(name string) error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		return env.Client.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	refusedBeyondBudget(t, "evict", pods, evict)
}

// refusedBeyondBudget disrupts (deletes, evicts) the first pod, which the budget has room for,
// then the second, and fails t unless the second is refused with 403 Forbidden naming the
// podunavailablebudget.
func refusedBeyondBudget(t *testing.T, what string, pods []string, disrupt func(name string) error) {
	t.Helper()
	if err := disrupt(pods[0]); err != nil {
		t.Fatalf("%s %s within the budget: %v", what, pods[0], err)
	}
	err := disrupt(pods[1])
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "podunavailablebudget") {
		t.Fatalf("%s %s beyond maxUnavailable: got %v, want 403 Forbidden naming the podunavailablebudget", what, pods[1], err)
	}
}

// TestNoProtectAnnotation: a pod with pub.kruise.io/no-protect=true is deleted even when its
// budget has no room.
func TestNoProtectAnnotation(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-noprotect-", nil)
	pods, _ := guardedPods(t, ns, 2, 0, map[string]string{policyv1alpha1.PodPubNoProtectionAnnotation: "true"})
	if err := deletePod(context.Background(), ns, pods[0]); err != nil {
		t.Fatalf("delete an exempt pod of a budget without room: %v", err)
	}
}

// TestDryRunDoesNotConsumeBudget: a dry-run deletion is checked but takes no room.
func TestDryRunDoesNotConsumeBudget(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-dryrun-", nil)
	pods, _ := guardedPods(t, ns, 3, 1, nil)

	ctx := context.Background()
	for _, name := range pods[:2] {
		if err := deletePod(ctx, ns, name, client.DryRunAll); err != nil {
			t.Fatalf("dry-run delete %s: %v", name, err)
		}
	}
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pub); err != nil {
		t.Fatal(err)
	}
	if pub.Status.UnavailableAllowed != 1 || len(pub.Status.DisruptedPods) != 0 {
		t.Fatalf("after two dry runs: unavailableAllowed %d, disruptedPods %v; want 1 and none", pub.Status.UnavailableAllowed, pub.Status.DisruptedPods)
	}
	if err := deletePod(ctx, ns, pods[2]); err != nil {
		t.Fatalf("delete %s after the dry runs: %v", pods[2], err)
	}
}

// TestDisruptedPodsExpiry: a disruptedPods record whose pod was never deleted is dropped after
// the deletion timeout, and the pod counts as available again.
func TestDisruptedPodsExpiry(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-expiry-", nil)
	pods, pub := guardedPods(t, ns, 3, 1, nil)

	// As if a deletion of pods[0] had been allowed moments ago and then never happened.
	// Truncated as the status keeps it: metav1.Time is whole seconds on the wire.
	recorded := time.Now().Add(-podunavailablebudget.DeletionTimeout / 2).Truncate(time.Second)
	pub.Status.DisruptedPods = map[string]metav1.Time{pods[0]: metav1.NewTime(recorded)}
	pub.Status.UnavailableAllowed = 0
	if err := env.Client.Status().Update(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	// While the record holds, the pod does not count and there is no room.
	if err := deletePod(context.Background(), ns, pods[1]); !apierrors.IsForbidden(err) {
		t.Fatalf("delete %s while %s is recorded: got %v, want 403 Forbidden", pods[1], pods[0], err)
	}
	framework.Eventually(t, podunavailablebudget.DeletionTimeout+framework.Medium, "the record expires", func(ctx context.Context) error {
		cur := &policyv1alpha1.PodUnavailableBudget{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, cur); err != nil {
			return err
		}
		if len(cur.Status.DisruptedPods) != 0 || numbers(cur) != (statusNumbers{Total: 3, Desired: 2, Current: 3, Allowed: 1}) {
			return fmt.Errorf("disruptedPods %v, status %+v", cur.Status.DisruptedPods, numbers(cur))
		}
		return nil
	})
	// Dropped no earlier than its expiry: a lower bound, which a slow machine only widens.
	if time.Since(recorded) < podunavailablebudget.DeletionTimeout {
		t.Fatalf("the record was dropped %v after it was made, before the deletion timeout %v", time.Since(recorded), podunavailablebudget.DeletionTimeout)
	}
}

// TestTargetRefToCloneSet: PodUnavailableBudget targetReference pods: the CloneSet's replicas
// are the total, its pods old and new name the budget, and a scale-up moves the numbers.
func TestTargetRefToCloneSet(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-target-", nil)
	cs := kinds.CloneSet("web", ns).Replicas(2).Obj()
	framework.Create(t, env.Client, cs)
	waitCloneSetPods(t, ns, "web", 2)
	framework.Create(t, env.Client, &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			TargetReference: &policyv1alpha1.TargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
			MaxUnavailable:  ptr.To(intstr.FromString("50%")),
		},
	})
	waitStatus(t, ns, "web", statusNumbers{Total: 2, Desired: 1, Current: 2, Allowed: 1})
	waitRelated(t, ns, "web", podNames(t, ns, "web")...)

	framework.Eventually(t, framework.Short, "scale the CloneSet to 4", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return err
		}
		cs.Spec.Replicas = ptr.To[int32](4)
		return env.Client.Update(ctx, cs)
	})
	waitCloneSetPods(t, ns, "web", 4)
	waitStatus(t, ns, "web", statusNumbers{Total: 4, Desired: 2, Current: 4, Allowed: 2})
	// The new pods were stamped when they were created.
	waitRelated(t, ns, "web", podNames(t, ns, "web")...)
}

// TestCloneSetInPlaceUpdateLimitedByBudget: PodUnavailableBudget selector cloneSet,
// strategy.type=in-place, update failed image and block: the CloneSet's own maxUnavailable
// would update every pod at once, but with the budget's room for one only one pod is updated
// while the updated one never comes back.
func TestCloneSetInPlaceUpdateLimitedByBudget(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-inplace-", nil)
	cs := kinds.CloneSet("web", ns).Replicas(4).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).
		MaxUnavailable(intstr.FromString("100%")).
		// An image change never finishes: an updated pod stays unavailable, as a failed image does.
		TemplateAnnotation(framework.AnnotationImageChangeDelay, "1h").Obj()
	updateInPlaceUnderBudget(t, cs, &cs.Spec.Template)
	waitStatus(t, ns, "web", statusNumbers{Total: 4, Desired: 3, Current: 3, Allowed: 0})
	// The CloneSet checked the budget itself and waited: it never sent an update the pod
	// webhook refused, which would show as a failed in-place update.
	events := &corev1.EventList{}
	if err := env.Client.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "CloneSet" && e.Reason == "FailedUpdatePodInPlace" {
			t.Fatalf("the CloneSet sent an update its budget had no room for: %s", e.Message)
		}
	}
}

// TestAdvancedStatefulSetInPlaceUpdateLimitedByBudget: as for the CloneSet, an Advanced
// StatefulSet whose own maxUnavailable would update every pod at once updates only as many as
// its budget has room for, and sends no update the pod webhook refuses.
func TestAdvancedStatefulSetInPlaceUpdateLimitedByBudget(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-asts-", nil)
	sts := kinds.StatefulSet("web", ns).Replicas(4).PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).Obj()
	sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	sts.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("100%"))
	sts.Spec.Template.Annotations = map[string]string{framework.AnnotationImageChangeDelay: "1h"}
	sts.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	updateInPlaceUnderBudget(t, sts, &sts.Spec.Template)
}

// updateInPlaceUnderBudget creates workload, whose 4 pods app=web never finish an image change,
// and a budget of maxUnavailable 1 over them, then changes the image in template (the
// workload's own) to busybox:2: one pod is updated in place, and past the budget's update
// record expiry, when the updated pod counts as unavailable by itself, the rest stay on the old
// image all along.
func updateInPlaceUnderBudget(t *testing.T, workload client.Object, template *corev1.PodTemplateSpec) {
	t.Helper()
	ns := workload.GetNamespace()
	framework.Create(t, env.Client, workload)
	waitCloneSetPods(t, ns, "web", 4)
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(1), 0))
	waitRelated(t, ns, "web", podNames(t, ns, "web")...)
	waitStatus(t, ns, "web", statusNumbers{Total: 4, Desired: 3, Current: 4, Allowed: 1})

	framework.Eventually(t, framework.Short, "update the workload's image", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(workload), workload); err != nil {
			return err
		}
		template.Spec.Containers[0].Image = "busybox:2"
		return env.Client.Update(ctx, workload)
	})
	updated := func(ctx context.Context) (int, error) {
		list := &corev1.PodList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
			return 0, err
		}
		n := 0
		for _, p := range list.Items {
			if p.Spec.Containers[0].Image == "busybox:2" {
				n++
			}
		}
		return n, nil
	}
	framework.Eventually(t, framework.Medium, "one pod is updated in place", func(ctx context.Context) error {
		n, err := updated(ctx)
		if err != nil {
			return err
		}
		return framework.Want(n >= 1, fmt.Sprintf("%d pods updated", n))
	})
	framework.Consistently(t, podunavailablebudget.UpdateTimeout+3*time.Second, "the budget holds the other pods", func(ctx context.Context) error {
		n, err := updated(ctx)
		if err != nil {
			return err
		}
		return framework.Want(n == 1, fmt.Sprintf("%d pods updated, the budget allows 1", n))
	})
}

func podNames(t *testing.T, ns, app string) []string {
	t.Helper()
	list := &corev1.PodList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// waitCloneSetPods waits until the CloneSet has n live pods, all Ready.
func waitCloneSetPods(t *testing.T, ns, app string, n int) {
	t.Helper()
	framework.Eventually(t, framework.Medium, fmt.Sprintf("%d Ready pods of %s", n, app), func(ctx context.Context) error {
		list := &corev1.PodList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			return err
		}
		ready := 0
		for i := range list.Items {
			if list.Items[i].DeletionTimestamp == nil && framework.PodReady(&list.Items[i]) {
				ready++
			}
		}
		return framework.Want(ready == n, fmt.Sprintf("%d of %d pods Ready", ready, n))
	})
}

// TestRelatedPubStampedOnCreation: /mutate-pod stamps a new pod that a budget covers with
// kruise.io/related-pub in the creation itself, before any controller sees the pod; a pod no
// budget covers is left alone.
func TestRelatedPubStampedOnCreation(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-stamp-", nil)
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(1), 0))
	covered := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1"}}},
	}
	other := covered.DeepCopy()
	other.Name, other.Labels = "api-0", map[string]string{"app": "api"}
	// The budget reaches the webhook's cache a moment after it is created.
	framework.Eventually(t, framework.Short, "a covered pod is created stamped", func(ctx context.Context) error {
		p := covered.DeepCopy()
		p.Name = ""
		p.GenerateName = "web-"
		if err := env.Client.Create(ctx, p); err != nil {
			return err
		}
		return framework.Want(p.Annotations[policyv1alpha1.PodRelatedPubAnnotation] == "web", fmt.Sprintf("pod %s created with annotations %v", p.Name, p.Annotations))
	})
	framework.Create(t, env.Client, other)
	if v, ok := other.Annotations[policyv1alpha1.PodRelatedPubAnnotation]; ok {
		t.Fatalf("a pod no budget covers was stamped with related-pub %q", v)
	}
}

// TestOverlappingBudgetRefused: the budget webhook refuses a second budget of the same pods,
// naming the field and the budget that holds them.
func TestOverlappingBudgetRefused(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-overlap-", nil)
	framework.Create(t, env.Client, budgetByLabel(ns, "first", "web", intstr.FromInt32(1), 0))
	err := env.Client.Create(context.Background(), budgetByLabel(ns, "second", "web", intstr.FromInt32(1), 0))
	if err == nil || !strings.Contains(err.Error(), "spec.selector") || !strings.Contains(err.Error(), "PodUnavailableBudget first") {
		t.Fatalf("create an overlapping budget: got %v, want a refusal naming spec.selector and budget first", err)
	}
}

// TestPodUpdateRefusedWithoutRoom: with PodUnavailableBudgetUpdateGate on, an update that
// changes a covered pod's spec (an in-place image change) is refused while the budget has no
// room, and an update of its labels alone is not.
func TestPodUpdateRefusedWithoutRoom(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pub-update-", nil)
	pods := readyBarePods(t, ns, "web", 2, nil)
	framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(0), 0))
	waitRelated(t, ns, "web", pods...)
	waitStatus(t, ns, "web", statusNumbers{Total: 2, Desired: 2, Current: 2, Allowed: 0})

	ctx := context.Background()
	p := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pods[0]}, p); err != nil {
		t.Fatal(err)
	}
	relabelled := p.DeepCopy()
	relabelled.Labels["team"] = "a"
	if err := env.Client.Update(ctx, relabelled); err != nil {
		t.Fatalf("relabel a covered pod: %v", err)
	}
	p = relabelled
	p.Spec.Containers[0].Image = "busybox:2"
	err := env.Client.Update(ctx, p)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "podunavailablebudget") {
		t.Fatalf("in-place image update of a covered pod without room: got %v, want 403 Forbidden naming the podunavailablebudget", err)
	}
}

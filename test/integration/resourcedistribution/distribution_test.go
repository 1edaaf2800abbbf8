package resourcedistribution

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// objectIn returns the object of obj's kind named name in ns, read into obj, or nil when there
// is none.
func objectIn[T client.Object](ctx context.Context, ns, name string, obj T) (T, error) {
	var none T
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return none, nil
	}
	if err != nil {
		return none, err
	}
	return obj, nil
}

// copyIn returns the ConfigMap name in ns, or nil when there is none.
func copyIn(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return objectIn(ctx, ns, name, &corev1.ConfigMap{})
}

// secretIn returns the Secret name in ns, or nil when there is none.
func secretIn(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return objectIn(ctx, ns, name, &corev1.Secret{})
}

// changeDistribution applies f to the distribution called name, again on any error until
// framework.Short: a write the webhook refuses while it is not serving yet is tried again.
func changeDistribution(t *testing.T, name, what string, f func(*appsv1alpha1.ResourceDistribution)) {
	t.Helper()
	framework.Eventually(t, framework.Short, what, func(ctx context.Context) error {
		return framework.TryChange(ctx, env.Client, client.ObjectKey{Name: name}, f)
	})
}

// hasCopy waits until ns holds a copy of rd's ConfigMap name with data want, owned by rd and
// annotated as 1.8 annotates copies.
func hasCopy(t *testing.T, rd *appsv1alpha1.ResourceDistribution, ns, name string, want map[string]string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, fmt.Sprintf("a copy of %s in %s with data %v", name, ns, want), func(ctx context.Context) error {
		cm, err := copyIn(ctx, ns, name)
		if err != nil || cm == nil {
			return framework.Want(false, fmt.Sprintf("no copy yet (%v)", err))
		}
		if diff := cmp.Diff(want, cm.Data); diff != "" {
			return fmt.Errorf("data (-want +got):\n%s", diff)
		}
		if cm.Annotations[appsv1alpha1.ResourceDistributionSourceAnnotation] != rd.Name || cm.Annotations[appsv1alpha1.ResourceDistributionHashCodeAnnotation] == "" {
			return fmt.Errorf("annotations %v lack the source and hash annotations", cm.Annotations)
		}
		ref := metav1.GetControllerOf(cm)
		if ref == nil || ref.UID != rd.UID || ref.Kind != "ResourceDistribution" {
			return fmt.Errorf("controller reference %+v, want the ResourceDistribution", ref)
		}
		return nil
	})
}

// hasNoCopy waits until ns holds no ConfigMap name.
func hasNoCopy(t *testing.T, ns, name string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, fmt.Sprintf("no %s in %s", name, ns), func(ctx context.Context) error {
		cm, err := copyIn(ctx, ns, name)
		if err != nil {
			return err
		}
		return framework.Want(cm == nil, "the copy is still there")
	})
}

// statusIs waits until rd's status reads want as "desired/succeeded/failed" at its current
// generation.
func statusIs(t *testing.T, name, want string) *appsv1alpha1.ResourceDistribution {
	t.Helper()
	rd := &appsv1alpha1.ResourceDistribution{}
	framework.Eventually(t, framework.Medium, "status "+want, func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, rd); err != nil {
			return err
		}
		got := fmt.Sprintf("%d/%d/%d", rd.Status.Desired, rd.Status.Succeeded, rd.Status.Failed)
		return framework.Want(got == want && rd.Status.ObservedGeneration == rd.Generation,
			fmt.Sprintf("status %s at generation %d of %d", got, rd.Status.ObservedGeneration, rd.Generation))
	})
	return rd
}

func condition(rd *appsv1alpha1.ResourceDistribution, t appsv1alpha1.ResourceDistributionConditionType) appsv1alpha1.ResourceDistributionCondition {
	for _, c := range rd.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return appsv1alpha1.ResourceDistributionCondition{}
}

// uniqueName is a cluster-wide name for this test's objects.
func uniqueName(t *testing.T) string {
	return strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
}

func TestAllNamespacesMinusExcludedAndNewNamespaces(t *testing.T) {
	useManager(t, true)
	a := framework.NewNamespace(t, env.Client, "rd-all-", nil)
	skip := framework.NewNamespace(t, env.Client, "rd-skip-", nil)
	name := uniqueName(t)
	rd := kinds.ResourceDistribution(name).ConfigMap("shared", map[string]string{"k": "v1"}).AllNamespaces().Exclude(skip).Obj()
	framework.CreateForTest(t, env.Client, rd)

	hasCopy(t, rd, a, "shared", map[string]string{"k": "v1"})
	hasCopy(t, rd, "default", "shared", map[string]string{"k": "v1"})
	later := framework.NewNamespace(t, env.Client, "rd-later-", nil)
	hasCopy(t, rd, later, "shared", map[string]string{"k": "v1"})
	hasNoCopy(t, skip, "shared")
	for _, ns := range []string{"kube-system", "kube-public"} {
		if cm, err := copyIn(context.Background(), ns, "shared"); err != nil || cm != nil {
			t.Errorf("%s holds a copy (%v): allNamespaces must leave it out", ns, err)
		}
	}
}

func TestIncludedNamespacesAndSourceChanges(t *testing.T) {
	useManager(t, true)
	a := framework.NewNamespace(t, env.Client, "rd-inc-", nil)
	b := framework.NewNamespace(t, env.Client, "rd-inc-", nil)
	other := framework.NewNamespace(t, env.Client, "rd-other-", nil)
	name := uniqueName(t)
	rd := kinds.ResourceDistribution(name).ConfigMap("app-config", map[string]string{"k": "v1"}).Include(a, b).Obj()
	framework.CreateForTest(t, env.Client, rd)
	hasCopy(t, rd, a, "app-config", map[string]string{"k": "v1"})
	hasCopy(t, rd, b, "app-config", map[string]string{"k": "v1"})
	statusIs(t, name, "2/2/0")
	hasNoCopy(t, other, "app-config")

	// A change to the source reaches every copy.
	changeDistribution(t, name, "the resource updated", func(cur *appsv1alpha1.ResourceDistribution) {
		cur.Spec.Resource = kinds.ResourceDistribution(name).ConfigMap("app-config", map[string]string{"k": "v2"}).Obj().Spec.Resource
	})
	hasCopy(t, rd, a, "app-config", map[string]string{"k": "v2"})
	hasCopy(t, rd, b, "app-config", map[string]string{"k": "v2"})

	// A namespace taken out of the targets loses its copy.
	changeDistribution(t, name, "namespace b untargeted", func(cur *appsv1alpha1.ResourceDistribution) {
		cur.Spec.Targets = kinds.ResourceDistribution(name).Include(a).Obj().Spec.Targets
	})
	hasNoCopy(t, b, "app-config")
	hasCopy(t, rd, a, "app-config", map[string]string{"k": "v2"})
	statusIs(t, name, "1/1/0")
}

func TestNamespaceLabelSelectorFollowsLabelChanges(t *testing.T) {
	useManager(t, true)
	name := uniqueName(t)
	labels := map[string]string{"rd-test": name}
	in := framework.NewNamespace(t, env.Client, "rd-sel-", labels)
	out := framework.NewNamespace(t, env.Client, "rd-sel-", nil)
	rd := kinds.ResourceDistribution(name).Secret("token", map[string]string{"t": "x"}).NamespaceLabels(labels).Obj()
	framework.CreateForTest(t, env.Client, rd)

	framework.Eventually(t, framework.Medium, "the Secret copied into the labelled namespace", func(ctx context.Context) error {
		s, err := secretIn(ctx, in, "token")
		if err != nil {
			return err
		}
		return framework.Want(s != nil && string(s.Data["t"]) == "x", "no copy with t=x yet")
	})
	statusIs(t, name, "1/1/0")
	if s, err := secretIn(context.Background(), out, "token"); err != nil || s != nil {
		t.Fatalf("the unlabelled namespace holds a copy (%v)", err)
	}

	// Labelling a namespace brings the copy; removing the label takes it away.
	setLabels := func(ns string, l map[string]string) {
		framework.Eventually(t, framework.Short, "labels of "+ns, func(ctx context.Context) error {
			return framework.TryChange(ctx, env.Client, client.ObjectKey{Name: ns}, func(cur *corev1.Namespace) { cur.Labels = l })
		})
	}
	setLabels(out, labels)
	setLabels(in, nil)
	framework.Eventually(t, framework.Medium, "the copy moved with the label", func(ctx context.Context) error {
		gained, err := secretIn(ctx, out, "token")
		if err != nil {
			return err
		}
		lost, err := secretIn(ctx, in, "token")
		if err != nil {
			return err
		}
		return framework.Want(gained != nil && lost == nil, fmt.Sprintf("copy in the newly labelled namespace %v, left in the unlabelled one %v", gained != nil, lost != nil))
	})
}

func TestConflictIsReportedAndNotOverwritten(t *testing.T) {
	useManager(t, true)
	mine := framework.NewNamespace(t, env.Client, "rd-conf-", nil)
	theirs := framework.NewNamespace(t, env.Client, "rd-conf-", nil)
	framework.Create(t, env.Client, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: theirs},
		Data:       map[string]string{"k": "someone else's"},
	})
	name := uniqueName(t)
	rd := kinds.ResourceDistribution(name).ConfigMap("settings", map[string]string{"k": "ours"}).Include(mine, theirs).Obj()
	framework.CreateForTest(t, env.Client, rd)

	hasCopy(t, rd, mine, "settings", map[string]string{"k": "ours"})
	got := statusIs(t, name, "2/1/1")
	c := condition(got, appsv1alpha1.ResourceDistributionConflictOccurred)
	if c.Status != appsv1alpha1.ResourceDistributionConditionTrue || !cmp.Equal(c.FailedNamespaces, []string{theirs}) {
		t.Errorf("ConflictOccurred %+v, want True with failedNamespace [%s]", c, theirs)
	}
	cm, err := copyIn(context.Background(), theirs, "settings")
	if err != nil || cm == nil {
		t.Fatalf("the foreign ConfigMap is gone (%v)", err)
	}
	if cm.Data["k"] != "someone else's" || metav1.GetControllerOf(cm) != nil || cm.Annotations[appsv1alpha1.ResourceDistributionSourceAnnotation] != "" {
		t.Errorf("the foreign ConfigMap was overwritten: data %v, owner %v, annotations %v", cm.Data, metav1.GetControllerOf(cm), cm.Annotations)
	}

	// Untargeting the namespace leaves the foreign object where it is.
	changeDistribution(t, name, "the conflicting namespace untargeted", func(cur *appsv1alpha1.ResourceDistribution) {
		cur.Spec.Targets = kinds.ResourceDistribution(name).Include(mine).Obj().Spec.Targets
	})
	statusIs(t, name, "1/1/0")
	if cm, err := copyIn(context.Background(), theirs, "settings"); err != nil || cm == nil || cm.Data["k"] != "someone else's" {
		t.Errorf("the foreign ConfigMap changed once untargeted: %v (%v)", cm, err)
	}
}

func TestMissingIncludedNamespaceIsReported(t *testing.T) {
	useManager(t, true)
	a := framework.NewNamespace(t, env.Client, "rd-miss-", nil)
	name := uniqueName(t)
	missing := "rd-never-created-" + name[len(name)-8:]
	framework.CreateForTest(t, env.Client, kinds.ResourceDistribution(name).ConfigMap("c", map[string]string{"k": "v"}).Include(a, missing).Obj())
	got := statusIs(t, name, "2/1/1")
	if c := condition(got, appsv1alpha1.ResourceDistributionNamespaceNotExists); c.Status != appsv1alpha1.ResourceDistributionConditionTrue || !cmp.Equal(c.FailedNamespaces, []string{missing}) {
		t.Errorf("NamespaceNotExists %+v, want True with failedNamespace [%s]", c, missing)
	}
}

func TestWebhookRefusesBadSpecsNamingTheField(t *testing.T) {
	useManager(t, true)
	cases := map[string]struct {
		rd        *appsv1alpha1.ResourceDistribution
		wantField string
	}{
		"a namespace both included and excluded": {
			kinds.ResourceDistribution("rd-bad-both").ConfigMap("c", nil).Include("a").Exclude("a").Obj(),
			"spec.targets.excludedNamespaces",
		},
		"an invalid namespace name": {
			kinds.ResourceDistribution("rd-bad-ns").ConfigMap("c", nil).Include("Not_A_Namespace").Obj(),
			"spec.targets.includedNamespaces.list[0].name",
		},
		"a ConfigMap the apiserver would refuse": {
			kinds.ResourceDistribution("rd-bad-data").ConfigMap("c", map[string]string{"bad key!": "v"}).AllNamespaces().Obj(),
			"spec.resource",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.rd)
			if err == nil {
				_ = env.Client.Delete(context.Background(), tc.rd)
				t.Fatal("created; want it refused")
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("error %q does not name %s", err, tc.wantField)
			}
		})
	}
}

// TestGateOffRefusesDistributions: with ResourceDistributionGate off the webhook refuses a
// ResourceDistribution, naming the gate, as 1.8 does, rather than admitting one nothing acts on;
// with the gate on the same object is admitted and distributed.
func TestGateOffRefusesDistributions(t *testing.T) {
	useManager(t, false)
	ns := framework.NewNamespace(t, env.Client, "rd-off-", nil)
	name := uniqueName(t)
	rd := kinds.ResourceDistribution(name).ConfigMap("quiet", map[string]string{"k": "v"}).Include(ns).Obj()
	// The webhook of the manager just started may take a moment to answer for it.
	framework.Eventually(t, framework.Long, "the ResourceDistribution refused while the gate is off", func(ctx context.Context) error {
		err := env.Client.Create(ctx, rd.DeepCopy())
		if err == nil {
			_ = env.Client.Delete(ctx, rd.DeepCopy())
			return fmt.Errorf("admitted with the gate off")
		}
		return framework.Want(apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ResourceDistributionGate"), fmt.Sprintf("error %v", err))
	})
	cm, err := copyIn(context.Background(), ns, "quiet")
	if err != nil {
		t.Fatal(err)
	}
	if cm != nil {
		t.Errorf("a copy exists although the distribution was refused")
	}

	useManager(t, true)
	framework.Eventually(t, framework.Long, "the ResourceDistribution admitted once the gate is on", func(ctx context.Context) error {
		created := rd.DeepCopy()
		if err := env.Client.Create(ctx, created); err != nil {
			return err
		}
		rd = created
		return nil
	})
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), rd.DeepCopy()) })
	hasCopy(t, rd, ns, "quiet", map[string]string{"k": "v"})
}

package daemonset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestWebhookDefaultsAndRefusesWithTheFieldNamed(t *testing.T) {
	ns := newNamespace(t)
	ds := kinds.DaemonSet("defaults", ns).Image(imageV1).Obj()
	ds.Spec.UpdateStrategy = appsv1alpha1.DaemonSetUpdateStrategy{Type: appsv1alpha1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1alpha1.RollingUpdateDaemonSet{Type: appsv1alpha1.DeprecatedSurgingRollingUpdateType}}
	createDaemonSet(t, ds)
	got := getDaemonSet(t, ns, "defaults")
	ru := got.Spec.UpdateStrategy.RollingUpdate
	if ru.Type != appsv1alpha1.StandardRollingUpdateType || ru.MaxSurge.String() != "1" || ru.MaxUnavailable.String() != "0" || ptr.Deref(ru.Partition, -1) != 0 {
		t.Errorf("Surging defaulted to %+v; want Standard with maxSurge 1, maxUnavailable 0, partition 0", ru)
	}
	if got.Spec.BurstReplicas.String() != "250" || ptr.Deref(got.Spec.RevisionHistoryLimit, -1) != 10 {
		t.Errorf("burstReplicas %v, revisionHistoryLimit %v; want 250 and 10", got.Spec.BurstReplicas, got.Spec.RevisionHistoryLimit)
	}

	// Each of these passes the CRD's schema, so the webhook is what refuses it.
	tests := []struct {
		name      string
		change    func(*appsv1alpha1.DaemonSet)
		wantField string
	}{
		{"a selector that does not match the template", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.Template.Labels = map[string]string{"app": "x"} }, "spec.template.metadata.labels"},
		{"activeDeadlineSeconds in the template", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }, "spec.template.spec.activeDeadlineSeconds"},
		{"a restartPolicy other than Always", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.Template.Spec.RestartPolicy = "Never" }, "spec.template.spec.restartPolicy"},
		{"a preDelete hook finalizer that is no name", func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"not a name"}}}
		}, "spec.lifecycle.preDelete.finalizersHandler[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := kinds.DaemonSet("bad", ns).Image(imageV1).Obj()
			tt.change(bad)
			framework.CreateRefused(t, env.Client, bad, `admission webhook "vdaemonset.kb.io" denied the request`, tt.wantField)
		})
	}

	t.Run("the selector cannot change", func(t *testing.T) {
		err := framework.TryChange(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "defaults"}, func(cur *appsv1alpha1.DaemonSet) {
			cur.Spec.Selector.MatchLabels["tier"] = "node"
			cur.Spec.Template.Labels["tier"] = "node"
		})
		framework.WantRefused(t, err, "spec.selector")
	})
}

func TestLongestNameRunsPods(t *testing.T) {
	ns := newNamespace(t)
	name := strings.Repeat("d", 253)
	ds := kinds.DaemonSet(name, ns).Image(imageV1).Obj()
	ds.Spec.Selector.MatchLabels = map[string]string{"app": "long"}
	ds.Spec.Template.Labels = map[string]string{"app": "long"}
	createDaemonSet(t, ds)
	framework.Eventually(t, framework.Medium, "a DaemonSet of the longest name runs its pods", func(ctx context.Context) error {
		ds := &appsv1alpha1.DaemonSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ds); err != nil {
			return err
		}
		return framework.Want(ds.Status.NumberAvailable == baseNodes, fmt.Sprintf("status %+v", ds.Status))
	})
}

// argoHealth is Argo CD's built-in health check for apps.kruise.io DaemonSet
// (resource_customizations/apps.kruise.io/DaemonSet/health.lua) written out in Go over the object
// as the API serves it, so that a field left out of the JSON reads as Lua's nil.
func argoHealth(obj map[string]any) (string, error) {
	status, ok := obj["status"].(map[string]any)
	if !ok {
		return "Progressing", nil
	}
	num := func(m map[string]any, path ...string) (int64, bool) {
		v, found, err := unstructured.NestedFieldNoCopy(m, path...)
		if err != nil || !found {
			return 0, false
		}
		n, ok := v.(int64)
		return n, ok
	}
	gen, _ := num(obj, "metadata", "generation")
	observed, hasObserved := num(status, "observedGeneration")
	if !hasObserved || gen != observed {
		return "Progressing", nil
	}
	paused, _, _ := unstructured.NestedBool(obj, "spec", "updateStrategy", "rollingUpdate", "paused")
	updated, hasUpdated := num(status, "updatedNumberScheduled")
	desired, _ := num(status, "desiredNumberScheduled")
	available, hasAvailable := num(status, "numberAvailable")
	unavailable, hasUnavailable := num(status, "numberUnavailable")
	partition, hasPartition := num(obj, "spec", "updateStrategy", "rollingUpdate", "partition")
	switch {
	case paused || !hasUpdated:
		return "Suspended", nil
	case (!hasPartition || partition != 0) && gen > 1:
		if !hasPartition {
			return "", fmt.Errorf("the script subtracts a partition that is not set")
		}
		if updated > desired-partition {
			return "Suspended", nil
		}
	case updated == desired && hasAvailable && available == desired:
		return "Healthy", nil
	case updated == desired && hasUnavailable && unavailable == desired:
		return "Degraded", nil
	}
	return "Progressing", nil
}

func health(ctx context.Context, ns, name string) (string, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(appsv1alpha1.GroupVersion.String())
	u.SetKind("DaemonSet")
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return "", err
	}
	return argoHealth(u.Object)
}

func TestStatusReadsHealthyProgressingAndSuspendedInArgoCD(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("argo", ns).Image(imageV1).MinReadySeconds(3).Obj())
	waitRolledOut(t, ns, "argo", imageV1, nodes, framework.Medium)
	wantHealth := func(want string) {
		t.Helper()
		framework.Eventually(t, framework.Medium, "Argo CD reads "+want, func(ctx context.Context) error {
			got, err := health(ctx, ns, "argo")
			if err != nil {
				return err
			}
			return framework.Want(got == want, "reads "+got)
		})
	}
	wantHealth("Healthy")

	// minReadySeconds keeps the rollout in progress for a while after each pod is ready.
	change(t, ns, "argo", setImage(imageV2))
	wantHealth("Progressing")
	change(t, ns, "argo", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Paused = ptr.To(true) })
	wantHealth("Suspended")
	change(t, ns, "argo", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Paused = ptr.To(false) })
	waitRolledOut(t, ns, "argo", imageV2, nodes, rollout)
	wantHealth("Healthy")
}

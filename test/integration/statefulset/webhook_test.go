package statefulset

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

func TestAV1alpha1AndAV1beta1ClientSeeTheSameObject(t *testing.T) {
	ns := newNamespace(t)
	beta := newSet("ss", ns, 1)
	alpha := &appsv1alpha1.StatefulSet{ObjectMeta: *beta.ObjectMeta.DeepCopy(), Spec: *beta.Spec.DeepCopy()}
	alpha.Name = "ss-alpha"
	alpha.Spec.Selector.MatchLabels = map[string]string{"app": "ss-alpha"}
	alpha.Spec.Template.Labels = map[string]string{"app": "ss-alpha"}
	framework.Create(t, env.Client, beta)
	framework.Create(t, env.Client, alpha)
	waitSettled(t, ns, "ss", rollout, "ss-0")
	waitSettled(t, ns, "ss-alpha", rollout, "ss-alpha-0")

	for _, name := range []string{"ss", "ss-alpha"} {
		b := &appsv1beta1.StatefulSet{}
		a := &appsv1alpha1.StatefulSet{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, a); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(a.Spec, b.Spec) || !equality.Semantic.DeepEqual(a.Status, b.Status) {
			t.Errorf("%s: v1alpha1 and v1beta1 differ:\n%s", name, cmp.Diff(b.Spec, a.Spec))
		}
		// Both were defaulted by the webhook, whichever version they were written in.
		ru := b.Spec.UpdateStrategy.RollingUpdate
		if b.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement || ru == nil || ru.PodUpdatePolicy != appsv1beta1.RecreatePodUpdateStrategyType ||
			ptr.Deref(ru.Partition, -1) != 0 || ru.MaxUnavailable == nil || ptr.Deref(b.Spec.RevisionHistoryLimit, 0) != 10 {
			t.Errorf("%s was not defaulted as 1.8 does: %+v", name, b.Spec)
		}
	}
}

func TestInPlacePoliciesNeedTheInPlaceUpdateReadyGate(t *testing.T) {
	ns := newNamespace(t)
	for _, set := range []client.Object{
		newSet("beta", ns, 1, rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) {
			ru.PodUpdatePolicy = appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType
		})),
		func() client.Object {
			b := newSet("alpha", ns, 1, rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) {
				ru.PodUpdatePolicy = appsv1beta1.InPlaceOnlyPodUpdateStrategyType
			}))
			return &appsv1alpha1.StatefulSet{ObjectMeta: b.ObjectMeta, Spec: b.Spec}
		}(),
	} {
		err := env.Client.Create(context.Background(), set)
		if err == nil || !strings.Contains(err.Error(), "spec.template.spec.readinessGates") || !strings.Contains(err.Error(), "InPlaceUpdateReady") {
			t.Errorf("%T %s: create error %v; want a refusal naming spec.template.spec.readinessGates and InPlaceUpdateReady", set, set.GetName(), err)
		}
	}
	// With the gate, it is accepted.
	framework.Create(t, env.Client, newSet("gated", ns, 1, inPlace(appsv1beta1.InPlaceOnlyPodUpdateStrategyType)))
}

func TestWebhookRefusesABadSpecNamingTheField(t *testing.T) {
	ns := newNamespace(t)
	// The schema accepts any maxUnavailable; only Parallel may take more than one pod down.
	set := newSet("ss", ns, 2, rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) {
		ru.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	}))
	err := env.Client.Create(context.Background(), set)
	if err == nil || !strings.Contains(err.Error(), "spec.updateStrategy.rollingUpdate.maxUnavailable") || !strings.Contains(err.Error(), "Parallel") {
		t.Errorf("create error %v; want a refusal naming spec.updateStrategy.rollingUpdate.maxUnavailable and saying Parallel", err)
	}
}

// TestTemplateNoDefaultsOffTheTemplatesAreStoredWithThePodAndClaimDefaults: with
// TemplateNoDefaults off (1.8's default) the webhook stores the pod template with the core pod
// defaults and the volume claim templates with the claim defaults, as 1.8 does.
func TestTemplateNoDefaultsOffTheTemplatesAreStoredWithThePodAndClaimDefaults(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 0, withClaims))
	set := mustGetSet(t, ns, "ss")
	ps := set.Spec.Template.Spec
	c := ps.Containers[0]
	if ps.RestartPolicy != corev1.RestartPolicyAlways || ps.DNSPolicy != corev1.DNSClusterFirst || ps.SchedulerName != corev1.DefaultSchedulerName ||
		ps.TerminationGracePeriodSeconds == nil || c.TerminationMessagePath != corev1.TerminationMessagePathDefault || c.ImagePullPolicy == "" {
		t.Errorf("stored pod template %+v; want the core pod defaults", ps)
	}
	if vm := set.Spec.VolumeClaimTemplates[0].Spec.VolumeMode; vm == nil || *vm != corev1.PersistentVolumeFilesystem {
		t.Errorf("stored claim template volumeMode %v; want Filesystem", vm)
	}
}

//go:build e2e && multinode

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

var oneEach = map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}

// podInZone is the one placed pod in zone.
func podInZone(t *testing.T, pods []placedPod, zone string) corev1.Pod {
	t.Helper()
	for _, p := range pods {
		if p.zone == zone {
			return p.pod
		}
	}
	t.Fatalf("no pod in %s", zone)
	return corev1.Pod{}
}

func (cl *cluster) evict(ctx context.Context, ns, name string) error {
	return cl.cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
}

// testBudgetAcrossZones: a CloneSet of 3 spread one pod per zone, guarded by a budget of
// maxUnavailable 1. Draining two zones at once: the first eviction goes through, the second is
// refused (403 naming the budget) and its pod keeps running; once the replacement runs in the
// first zone, the second eviction goes through too.
func testBudgetAcrossZones(t *testing.T, cl *cluster) {
	ns := framework.NewNamespace(t, cl.c, "pub-", nil)
	cs := kinds.CloneSet("web", ns).Replicas(3).Image(cl.sampleImage()).Obj()
	spreadOverZones(&cs.Spec.Template.Spec, "web")
	quickStop(&cs.Spec.Template.Spec)
	framework.Create(t, cl.c, cs)
	pods := cl.waitReadyByZone(t, ns, "web", oneEach)

	framework.Create(t, cl.c, &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		},
	})
	waitBudget := func(allowed int32) {
		t.Helper()
		framework.Eventually(t, podTimeout, fmt.Sprintf("the budget: 3 replicas, 3 available, %d allowed", allowed), func(ctx context.Context) error {
			pub := &policyv1alpha1.PodUnavailableBudget{}
			if err := cl.c.Get(ctx, nsName(ns, "web"), pub); err != nil {
				return err
			}
			s := pub.Status
			return framework.Want(s.TotalReplicas == 3 && s.DesiredAvailable == 2 && s.CurrentAvailable == 3 && s.UnavailableAllowed == allowed,
				fmt.Sprintf("total %d desired %d current %d allowed %d", s.TotalReplicas, s.DesiredAvailable, s.CurrentAvailable, s.UnavailableAllowed))
		})
	}
	waitBudget(1)

	inB, inC := podInZone(t, pods, "zone-b"), podInZone(t, pods, "zone-c")
	ctx := context.Background()
	require.NoError(t, cl.evict(ctx, ns, inB.Name), "evict %s in zone-b: the budget has room for one", inB.Name)
	err := cl.evict(ctx, ns, inC.Name)
	require.True(t, apierrors.IsForbidden(err) && strings.Contains(err.Error(), "podunavailablebudget"),
		"evict %s in zone-c while zone-b's pod is gone: got %v, want 403 naming the podunavailablebudget", inC.Name, err)
	p := &corev1.Pod{}
	require.NoError(t, cl.c.Get(ctx, nsName(ns, inC.Name), p))
	require.Nil(t, p.DeletionTimestamp, "the refused eviction left %s running", inC.Name)

	// The replacement can only go to zone-b (one pod per zone); then there is room again.
	after := cl.waitReadyByZone(t, ns, "web", oneEach)
	require.NotEqual(t, inB.UID, podInZone(t, after, "zone-b").UID, "zone-b runs a replacement")
	waitBudget(1)
	require.NoError(t, cl.evict(ctx, ns, inC.Name), "evict %s once the budget has room again", inC.Name)
	cl.waitReadyByZone(t, ns, "web", oneEach)
}

// testResourceDistributionOnNodes: a ResourceDistribution of a Secret to the namespaces carrying a
// label: the copies appear there and not elsewhere, pods on two different nodes start with the
// copy's value in their environment (kubectl logs, through each node's kubelet), and a changed
// value reaches every copy.
func testResourceDistributionOnNodes(t *testing.T, cl *cluster) {
	mark := map[string]string{"e2e.kruise.io/distribution": "multinode"}
	nsB := framework.NewNamespace(t, cl.c, "rd-", mark)
	nsC := framework.NewNamespace(t, cl.c, "rd-", mark)
	nsOut := framework.NewNamespace(t, cl.c, "rd-out-", nil)
	rd := kinds.ResourceDistribution("e2e-multinode").Secret("shared", map[string]string{"value": "first"}).NamespaceLabels(mark).Obj()
	framework.CreateForTest(t, cl.c, rd)

	copies := func(want string) {
		t.Helper()
		framework.Eventually(t, podTimeout, fmt.Sprintf("Secret shared = %q in %s and %s, absent from %s", want, nsB, nsC, nsOut), func(ctx context.Context) error {
			for _, ns := range []string{nsB, nsC} {
				s := &corev1.Secret{}
				if err := cl.c.Get(ctx, nsName(ns, "shared"), s); err != nil {
					return fmt.Errorf("%s: %w", ns, err)
				}
				if got := string(s.Data["value"]); got != want {
					return fmt.Errorf("%s: value %q", ns, got)
				}
			}
			err := cl.c.Get(ctx, nsName(nsOut, "shared"), &corev1.Secret{})
			return framework.Want(apierrors.IsNotFound(err), fmt.Sprintf("%s: %v", nsOut, err))
		})
	}
	copies("first")

	for ns, zone := range map[string]string{nsB: "zone-b", nsC: "zone-c"} {
		node := cl.nodeOfZone(t, zone)
		framework.Create(t, cl.c, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns, Labels: map[string]string{"app": "reader"}},
			Spec: corev1.PodSpec{
				NodeSelector:                  map[string]string{corev1.LabelHostname: node},
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "main", Image: cl.sampleImage(), Env: []corev1.EnvVar{{Name: "SAMPLE_ENV",
					ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}, Key: "value"}}}}}},
			},
		})
		framework.Eventually(t, podTimeout, fmt.Sprintf("the reader on %s logs the distributed value", node), func(ctx context.Context) error {
			p := &corev1.Pod{}
			if err := cl.c.Get(ctx, nsName(ns, "reader"), p); err != nil {
				return err
			}
			if p.Spec.NodeName != node || !framework.PodReady(p) {
				return fmt.Errorf("reader on %q, phase %s", p.Spec.NodeName, p.Status.Phase)
			}
			out, err := cl.kubectlOut("logs", "-n", ns, "reader")
			if err != nil {
				return fmt.Errorf("kubectl logs: %w: %s", err, out)
			}
			return framework.Want(strings.Contains(out, "SAMPLE_ENV first"), out)
		})
	}

	framework.Change(t, cl.c, types.NamespacedName{Name: rd.Name}, func(d *appsv1alpha1.ResourceDistribution) {
		d.Spec.Resource = kinds.ResourceDistribution(d.Name).Secret("shared", map[string]string{"value": "second"}).Obj().Spec.Resource
	})
	copies("second")
}

// testPersistentPodStateZones: an Advanced StatefulSet of 3, one pod per zone, whose generated
// PersistentPodState requires the zone. Once the states are recorded, every pod is deleted at
// once; each comes back, with a nodeSelector for its zone (as 1.8 injects required topology), on
// the node it had.
func testPersistentPodStateZones(t *testing.T, cl *cluster) {
	ns := framework.NewNamespace(t, cl.c, "pps-", nil)
	sts := kinds.StatefulSet("db", ns).Replicas(3).Image(cl.sampleImage()).Obj()
	sts.Annotations = map[string]string{
		appsv1alpha1.AnnotationAutoGeneratePersistentPodState: "true",
		appsv1alpha1.AnnotationRequiredPersistentTopology:     corev1.LabelTopologyZone,
	}
	sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	spreadOverZones(&sts.Spec.Template.Spec, "db")
	quickStop(&sts.Spec.Template.Spec)
	framework.Create(t, cl.c, sts)
	before := map[string]placedPod{}
	for _, p := range cl.waitReadyByZone(t, ns, "db", oneEach) {
		before[p.pod.Name] = p
	}

	framework.Eventually(t, podTimeout, "the generated PersistentPodState records each pod's node and zone", func(ctx context.Context) error {
		pps := &appsv1alpha1.PersistentPodState{}
		if err := cl.c.Get(ctx, nsName(ns, "db"), pps); err != nil {
			return err
		}
		for name, p := range before {
			st, ok := pps.Status.PodStates[name]
			if !ok || st.NodeName != p.pod.Spec.NodeName || st.NodeTopologyLabels[corev1.LabelTopologyZone] != p.zone {
				return fmt.Errorf("state of %s: %+v, want node %s zone %s", name, st, p.pod.Spec.NodeName, p.zone)
			}
		}
		return nil
	})

	ctx := context.Background()
	for name := range before {
		require.NoError(t, cl.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}), "delete %s", name)
	}
	var after []placedPod
	framework.Eventually(t, rolloutTimeout, "every pod recreated and ready", func(ctx context.Context) error {
		var err error
		if after, err = cl.placedPods(ctx, ns, "db"); err != nil {
			return err
		}
		fresh := 0
		for _, p := range after {
			if b, ok := before[p.pod.Name]; ok && b.pod.UID != p.pod.UID && framework.PodReady(&p.pod) {
				fresh++
			}
		}
		return framework.Want(len(after) == 3 && fresh == 3, fmt.Sprintf("%d pods, %d recreated and ready", len(after), fresh))
	})
	for _, p := range after {
		b := before[p.pod.Name]
		require.Equal(t, b.pod.Spec.NodeName, p.pod.Spec.NodeName, "pod %s is back on its node", p.pod.Name)
		require.Equal(t, b.zone, p.zone, "pod %s is back in its zone", p.pod.Name)
		require.Equal(t, b.zone, p.pod.Spec.NodeSelector[corev1.LabelTopologyZone], "pod %s is made to require its zone: nodeSelector %v", p.pod.Name, p.pod.Spec.NodeSelector)
		require.Equal(t, "db", p.pod.Annotations[injectedPersistentPodState], "pod %s names the PersistentPodState that placed it", p.pod.Name)
	}
}

// injectedPersistentPodState is the pod annotation naming the PersistentPodState whose state the
// webhook restored.
const injectedPersistentPodState = "kruise.io/injected-persistent-pod-state"

//go:build e2e && multinode

package e2e

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// The UnitedDeployment's Adaptive times, in seconds: long enough for the scheduler to report the
// pods unschedulable on a real node, short enough that the scenario waits seconds.
const (
	udRescheduleCritical = 10
	udUnschedulableLast  = 30
)

// testWorkloadSpreadZones: subsets zone-a (25%), zone-b (50%) and zone-c (the rest) of a CloneSet
// of 4, then 8: the webhook gives each pod its subset's zone, the scheduler places it on that
// zone's node, and each subset holds its percentage of the replicas.
func testWorkloadSpreadZones(t *testing.T, cl *cluster) {
	ns := framework.NewNamespace(t, cl.c, "ws-", nil)
	framework.Create(t, cl.c, kinds.WorkloadSpread("web", ns).Target(appsv1alpha1.GroupVersion.String(), "CloneSet", "web").
		ZoneSubset("a", "zone-a", "25%").ZoneSubset("b", "zone-b", "50%").ZoneSubset("c", "zone-c", "").Obj())
	cs := kinds.CloneSet("web", ns).Replicas(4).Image(cl.sampleImage()).Obj()
	quickStop(&cs.Spec.Template.Spec)
	framework.Create(t, cl.c, cs)

	subsetZone := map[string]string{"a": "zone-a", "b": "zone-b", "c": "zone-c"}
	check := func(want map[string]int, wantMissing map[string]int32) {
		t.Helper()
		pods := cl.waitReadyByZone(t, ns, "web", want)
		for _, p := range pods {
			s, err := matchedSubset(&p.pod)
			require.NoError(t, err)
			require.Equal(t, subsetZone[s], p.zone, "pod %s of subset %s runs on %s, in the subset's zone", p.pod.Name, s, p.pod.Spec.NodeName)
		}
		framework.Eventually(t, podTimeout, "the subsets' missingReplicas", func(ctx context.Context) error {
			ws := &appsv1alpha1.WorkloadSpread{}
			if err := cl.c.Get(ctx, nsName(ns, "web"), ws); err != nil {
				return err
			}
			got := map[string]int32{}
			for _, s := range ws.Status.SubsetStatuses {
				got[s.Name] = s.MissingReplicas
			}
			return framework.Want(maps.Equal(got, wantMissing), fmt.Sprintf("missingReplicas %v, want %v", got, wantMissing))
		})
		t.Logf("%d replicas: %v", len(pods), want)
	}
	// 25% of 4 is 1 and 50% is 2: both subsets are full, zone-c (no maximum) takes the rest.
	check(map[string]int{"zone-a": 1, "zone-b": 2, "zone-c": 1}, map[string]int32{"a": 0, "b": 0, "c": -1})

	framework.Change(t, cl.c, nsName(ns, "web"), func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](8) })
	check(map[string]int{"zone-a": 2, "zone-b": 4, "zone-c": 2}, map[string]int32{"a": 0, "b": 0, "c": -1})
}

// cordon marks a node (un)schedulable, as kubectl cordon and uncordon do.
func (cl *cluster) cordon(t *testing.T, node string, on bool) {
	t.Helper()
	verb := "uncordon"
	if on {
		verb = "cordon"
	}
	_, err := cl.kubectlRun(t, "", verb, node)
	require.NoError(t, err, "%s %s", verb, node)
}

// nodeOfZone is the one node of zone.
func (cl *cluster) nodeOfZone(t *testing.T, zone string) string {
	t.Helper()
	zones, err := cl.nodeZones(context.Background())
	require.NoError(t, err)
	for n, z := range zones {
		if z == zone {
			return n
		}
	}
	t.Fatalf("no node in zone %s: %v", zone, zones)
	return ""
}

// subsetSchedulable is the Schedulable condition of the UnitedDeployment's subset ("" when unset).
func subsetSchedulable(ud *appsv1alpha1.UnitedDeployment, subset string) (corev1.ConditionStatus, time.Time) {
	s := ud.Status.GetSubsetStatus(subset)
	if s == nil {
		return "", time.Time{}
	}
	c := s.GetCondition(appsv1alpha1.UnitedDeploymentSubsetSchedulable)
	if c == nil {
		return "", time.Time{}
	}
	return c.Status, c.LastTransitionTime.Time
}

// testUnitedDeploymentAdaptive: zone-a's node is cordoned, so the two pods the UnitedDeployment
// gives zone-a (its maxReplicas) stay unschedulable; after rescheduleCriticalSeconds they are
// made in zone-b instead and zone-a is marked unschedulable. Once the node is back and
// unschedulableLastSeconds have passed, zone-a is schedulable again and a scale-up fills it first.
func testUnitedDeploymentAdaptive(t *testing.T, cl *cluster) {
	ns := framework.NewNamespace(t, cl.c, "ud-", nil)
	nodeA := cl.nodeOfZone(t, "zone-a")
	cl.cordon(t, nodeA, true)
	t.Cleanup(func() { _, _ = cl.kubectlOut("uncordon", nodeA) })

	ud := kinds.UnitedDeployment("web", ns).Replicas(2).Image(cl.sampleImage()).Zones("zone-a", "zone-b").
		SubsetBounds("zone-a", "", "2").Adaptive(udRescheduleCritical, udUnschedulableLast).Obj()
	quickStop(&ud.Spec.Template.CloneSetTemplate.Spec.Template.Spec)
	framework.Create(t, cl.c, ud)

	framework.Eventually(t, podTimeout, "zone-a's two pods unschedulable on the cordoned node", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, cl.c, ns, "web")
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods {
			for _, c := range p.Status.Conditions {
				if p.Labels[appsv1alpha1.SubSetNameLabelKey] == "zone-a" && c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					n++
				}
			}
		}
		return framework.Want(n == 2, fmt.Sprintf("%d of %d pods unschedulable in zone-a", n, len(pods)))
	})
	// The pending pods go, and two run in zone-b instead.
	moved := cl.waitReadyByZone(t, ns, "web", map[string]int{"zone-b": 2})
	for _, p := range moved {
		require.Equal(t, "zone-b", p.pod.Labels[appsv1alpha1.SubSetNameLabelKey], "pod %s belongs to subset zone-b", p.pod.Name)
	}
	ud = &appsv1alpha1.UnitedDeployment{}
	require.NoError(t, cl.c.Get(context.Background(), nsName(ns, "web"), ud))
	st, markedAt := subsetSchedulable(ud, "zone-a")
	require.Equal(t, corev1.ConditionFalse, st, "zone-a is marked unschedulable")

	cl.cordon(t, nodeA, false)
	framework.Eventually(t, time.Duration(udUnschedulableLast)*time.Second+podTimeout, "zone-a schedulable again after unschedulableLastSeconds", func(ctx context.Context) error {
		ud := &appsv1alpha1.UnitedDeployment{}
		if err := cl.c.Get(ctx, nsName(ns, "web"), ud); err != nil {
			return err
		}
		st, at := subsetSchedulable(ud, "zone-a")
		if st != corev1.ConditionTrue {
			return fmt.Errorf("zone-a Schedulable %q", st)
		}
		return framework.Want(at.Sub(markedAt) >= udUnschedulableLast*time.Second, fmt.Sprintf("zone-a came back %s after it was marked", at.Sub(markedAt)))
	})
	framework.Change(t, cl.c, nsName(ns, "web"), func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Replicas = ptr.To[int32](4) })
	for _, p := range cl.waitReadyByZone(t, ns, "web", map[string]int{"zone-a": 2, "zone-b": 2}) {
		require.Equal(t, p.zone, p.pod.Labels[appsv1alpha1.SubSetNameLabelKey], "pod %s runs in its subset's zone", p.pod.Name)
	}
}

// testBroadcastJobEveryNode: a BroadcastJob whose container exits 0 makes one pod per node, each
// runs to Succeeded on its node's kubelet, and the job completes with desired = succeeded = nodes.
func testBroadcastJobEveryNode(t *testing.T, cl *cluster) {
	ns := framework.NewNamespace(t, cl.c, "bcj-", nil)
	job := kinds.BroadcastJob("check", ns).Image(cl.sampleImage()).Obj()
	job.Spec.Template.Spec.Containers[0].Args = []string{"exists", "/etc/image-version"}
	framework.Create(t, cl.c, job)
	framework.Eventually(t, rolloutTimeout, "the BroadcastJob completed on every node", func(ctx context.Context) error {
		j := &appsv1alpha1.BroadcastJob{}
		if err := cl.c.Get(ctx, nsName(ns, "check"), j); err != nil {
			return err
		}
		s := j.Status
		return framework.Want(s.Phase == appsv1alpha1.PhaseCompleted && s.Desired == multiNodes && s.Succeeded == multiNodes,
			fmt.Sprintf("phase %q desired %d active %d succeeded %d failed %d", s.Phase, s.Desired, s.Active, s.Succeeded, s.Failed))
	})
	pods := framework.MustLivePods(t, cl.c, ns, "check")
	zones, err := cl.nodeZones(context.Background())
	require.NoError(t, err)
	var onNodes []string
	for _, p := range pods {
		require.Equal(t, corev1.PodSucceeded, p.Status.Phase, "pod %s", p.Name)
		onNodes = append(onNodes, p.Spec.NodeName)
	}
	var all []string
	for n := range zones {
		all = append(all, n)
	}
	sort.Strings(onNodes)
	sort.Strings(all)
	require.Equal(t, strings.Join(all, ","), strings.Join(onNodes, ","), "one pod on every node")
}

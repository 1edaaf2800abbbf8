package uniteddeployment

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// Adaptive times of the test, in seconds: short, so that the test waits seconds, not minutes.
const (
	rescheduleCritical = 3
	unschedulableLast  = 20
)

// zone-small holds two pods. A UnitedDeployment that wants four there sees two stay pending;
// after rescheduleCriticalSeconds the subset is marked unschedulable and the two replicas move
// to zone-b. After unschedulableLastSeconds the subset is tried again: once the zone has room, a
// scale-up lands there.
func TestAdaptiveMovesPendingReplicasOnAndRetriesTheSubsetLater(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.UnitedDeployment("web", ns).Replicas(4).Image(imageV1).
		Zones(zoneSmall, zoneB).SubsetBounds(zoneSmall, "", "4").Adaptive(rescheduleCritical, unschedulableLast).Obj())

	// The scheduler cannot place two of zone-small's four pods.
	framework.Eventually(t, settle, "two pods of zone-small stay unschedulable", func(ctx context.Context) error {
		pods, err := podsBySubset(ctx, ns, "web")
		if err != nil {
			return err
		}
		pending := 0
		for _, p := range pods[zoneSmall] {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					pending++
				}
			}
		}
		return framework.Want(pending == 2, fmt.Sprintf("%d unschedulable pods in zone-small", pending))
	})
	// Then they move on to zone-b, and zone-small is marked unschedulable.
	waitSpread(t, ns, "web", map[string]int32{zoneSmall: 2, zoneB: 2})
	cond, err := subsetSchedulable(context.Background(), ns, "web", zoneSmall)
	if err != nil || cond == nil || cond.Status != corev1.ConditionFalse {
		t.Fatalf("zone-small Schedulable condition %+v (%v), want False", cond, err)
	}
	markedAt := cond.LastTransitionTime.Time

	// While it is marked, a scale-up goes elsewhere even though zone-small now has room.
	if err := sim.AddNodes(context.Background(), builder.Node("small-1").Zone(zoneSmall).Capacity("64", "256Gi", 10).Obj()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), builder.Node("small-1").Obj()) })
	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Replicas = ptr.To[int32](5) })
	framework.Eventually(t, framework.Medium, "the scale-up goes to zone-b while zone-small is marked", func(ctx context.Context) error {
		cond, err := subsetSchedulable(ctx, ns, "web", zoneSmall)
		if err != nil {
			return err
		}
		if cond.Status != corev1.ConditionFalse {
			return fmt.Errorf("zone-small is no longer marked unschedulable: %+v", cond)
		}
		return spread(ctx, ns, "web", map[string]int32{zoneSmall: 2, zoneB: 3})
	})

	// After unschedulableLastSeconds the subset is schedulable again...
	framework.Eventually(t, time.Duration(unschedulableLast)*time.Second+settle, "zone-small is tried again", func(ctx context.Context) error {
		cond, err := subsetSchedulable(ctx, ns, "web", zoneSmall)
		if err != nil {
			return err
		}
		if cond.Status != corev1.ConditionTrue {
			return fmt.Errorf("zone-small Schedulable %s since %s", cond.Status, cond.LastTransitionTime)
		}
		if held := cond.LastTransitionTime.Sub(markedAt); held < time.Duration(unschedulableLast)*time.Second {
			return fmt.Errorf("zone-small came back after %s, before unschedulableLastSeconds (%ds)", held, unschedulableLast)
		}
		return nil
	})
	// ...and the next scale-up fills it up to its maximum first.
	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Replicas = ptr.To[int32](7) })
	waitSpread(t, ns, "web", map[string]int32{zoneSmall: 4, zoneB: 3})
}

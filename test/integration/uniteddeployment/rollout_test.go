package uniteddeployment

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// setImage changes the image of whichever template the UnitedDeployment has.
func setImage(u *appsv1alpha1.UnitedDeployment, image string) {
	t := &u.Spec.Template
	switch {
	case t.CloneSetTemplate != nil:
		t.CloneSetTemplate.Spec.Template.Spec.Containers[0].Image = image
	case t.AdvancedStatefulSetTemplate != nil:
		t.AdvancedStatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = image
	case t.StatefulSetTemplate != nil:
		t.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = image
	case t.DeploymentTemplate != nil:
		t.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = image
	}
}

// imagesBySubset counts the running pods of app per subset and image.
func imagesBySubset(ctx context.Context, ns, app string) (map[string]map[string]int, error) {
	pods, err := podsBySubset(ctx, ns, app)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]int{}
	for subset, ps := range pods {
		out[subset] = map[string]int{}
		for _, p := range ps {
			out[subset][p.Spec.Containers[0].Image]++
		}
	}
	return out, nil
}

// Each kind runs the subsets in their zones, and a template change reaches every subset. The
// finished rollout's status is what a health check (Argo CD's, or a script) reads:
// observedGeneration equals generation, and updatedReplicas, readyReplicas and replicas equal
// spec.replicas, with currentRevision at updateStatus.updatedRevision.
func TestEveryTemplateKindRunsTheSubsetsAndRollsOutATemplateChange(t *testing.T) {
	kindsOf := map[string]func(*kinds.UnitedDeploymentBuilder) *kinds.UnitedDeploymentBuilder{
		"cloneSetTemplate":            func(b *kinds.UnitedDeploymentBuilder) *kinds.UnitedDeploymentBuilder { return b },
		"advancedStatefulSetTemplate": (*kinds.UnitedDeploymentBuilder).AdvancedStatefulSet,
		"statefulSetTemplate":         (*kinds.UnitedDeploymentBuilder).StatefulSet,
		"deploymentTemplate":          (*kinds.UnitedDeploymentBuilder).Deployment,
	}
	for name, kind := range kindsOf {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := newNamespace(t)
			framework.Create(t, env.Client, kind(kinds.UnitedDeployment("web", ns).Replicas(4).Image(imageV1).Zones(zoneA, zoneB)).Obj())
			waitSpread(t, ns, "web", map[string]int32{zoneA: 2, zoneB: 2})
			before := waitRolledOut(t, ns, "web", 4)

			updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { setImage(u, imageV2) })
			framework.Eventually(t, settle, "every subset runs "+imageV2, func(ctx context.Context) error {
				got, err := imagesBySubset(ctx, ns, "web")
				if err != nil {
					return err
				}
				if d := cmp.Diff(map[string]map[string]int{zoneA: {imageV2: 2}, zoneB: {imageV2: 2}}, got); d != "" {
					return fmt.Errorf("images per subset (-want +got):\n%s", d)
				}
				return nil
			})
			after := waitRolledOut(t, ns, "web", 4)
			if after.Status.CurrentRevision == before.Status.CurrentRevision {
				t.Errorf("currentRevision stayed %s after the template changed", after.Status.CurrentRevision)
			}
			if err := spread(ctx, ns, "web", map[string]int32{zoneA: 2, zoneB: 2}); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestManualPartitionsHoldPodsAtTheOldTemplatePerSubset(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.UnitedDeployment("web", ns).Replicas(6).Image(imageV1).Zones(zoneA, zoneB).
		Partition(zoneA, 1).Partition(zoneB, 3).Obj())
	waitSpread(t, ns, "web", map[string]int32{zoneA: 3, zoneB: 3})

	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { setImage(u, imageV2) })
	// zone-a keeps one pod back, zone-b all three.
	want := map[string]map[string]int{zoneA: {imageV1: 1, imageV2: 2}, zoneB: {imageV1: 3}}
	framework.Eventually(t, settle, "the partitions hold pods back", func(ctx context.Context) error {
		got, err := imagesBySubset(ctx, ns, "web")
		if err != nil {
			return err
		}
		if d := cmp.Diff(want, got); d != "" {
			return fmt.Errorf("images per subset (-want +got):\n%s", d)
		}
		ud, err := getUD(ctx, ns, "web")
		if err != nil {
			return err
		}
		if ud.Status.UpdatedReplicas != 2 || ud.Status.UpdatedReadyReplicas != 2 {
			return fmt.Errorf("status updatedReplicas %d, updatedReadyReplicas %d; want 2 and 2", ud.Status.UpdatedReplicas, ud.Status.UpdatedReadyReplicas)
		}
		if d := cmp.Diff(map[string]int32{zoneA: 1, zoneB: 3}, ud.Status.UpdateStatus.CurrentPartitions); d != "" {
			return fmt.Errorf("updateStatus.currentPartitions (-want +got):\n%s", d)
		}
		if ud.Status.CurrentRevision == ud.Status.UpdateStatus.UpdatedRevision {
			return fmt.Errorf("currentRevision already at the update revision while pods are held back")
		}
		return nil
	})
	// A held-back rollout must not read as finished to a health check.
	ud, err := getUD(context.Background(), ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if ud.Status.UpdatedReplicas == *ud.Spec.Replicas {
		t.Errorf("updatedReplicas %d equals spec.replicas while partitions hold pods back", ud.Status.UpdatedReplicas)
	}

	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { u.Spec.UpdateStrategy.ManualUpdate.Partitions = nil })
	waitRolledOut(t, ns, "web", 6)
}

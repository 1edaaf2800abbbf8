package cloneset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// The suite's manager runs with CloneSetPartitionRollback, PreparingUpdateAsUpdate and
// RecreatePodWhenChangeVCTInCloneSetGate on (see testOptions); the planner's table shows what
// 1.8's default, all off, does instead.

// revisions counts the CloneSet's live pods per controller-revision-hash, and per image.
func revisions(ctx context.Context, ns, name string) (byRevision, byImage map[string]int, err error) {
	pods, err := framework.LivePods(ctx, env.Client, ns, name)
	if err != nil {
		return nil, nil, err
	}
	byRevision, byImage = map[string]int{}, map[string]int{}
	for _, p := range pods {
		byRevision[p.Labels["controller-revision-hash"]]++
		byImage[p.Spec.Containers[0].Image]++
	}
	return byRevision, byImage, nil
}

func TestCloneSetPartitionRollbackMovesUpdatedPodsBackInPlace(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(4).Image(imageV1).Partition(intstr.FromInt32(1)).
		MaxUnavailable(intstr.FromInt32(4)).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 4, settle)
	uids := map[string]bool{}
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		uids[string(p.UID)] = true
	}

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	framework.Eventually(t, settle, "three pods updated and ready", func(ctx context.Context) error {
		st := getCloneSet(t, ns, "web").Status
		if st.UpdatedReadyReplicas != 3 || st.ReadyReplicas != 4 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})

	// The partition grows back to 3: two of the three updated pods return to the current revision.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { p := intstr.FromInt32(3); cs.Spec.UpdateStrategy.Partition = &p })
	framework.Eventually(t, settle, "one pod updated and three back at the current revision, all ready", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		st := cs.Status
		if st.ObservedGeneration != cs.Generation || st.UpdatedReplicas != 1 || st.ReadyReplicas != 4 {
			return fmt.Errorf("status %+v", st)
		}
		byRevision, byImage, err := revisions(ctx, ns, "web")
		if err != nil {
			return err
		}
		if byRevision[st.UpdateRevision] != 1 || byRevision[st.CurrentRevision] != 3 || byImage[imageV1] != 3 || byImage[imageV2] != 1 {
			return fmt.Errorf("pods per revision %v, per image %v; want 1 at %s (%s) and 3 at %s (%s)",
				byRevision, byImage, st.UpdateRevision, imageV2, st.CurrentRevision, imageV1)
		}
		return nil
	})
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		if !uids[string(p.UID)] {
			t.Fatalf("pod %s is new: the rollback of an image change goes in place", p.Name)
		}
	}
}

func TestCloneSetRegardsPreparingUpdatePodAsUpdateWhenScaling(t *testing.T) {
	ns := newNamespace(t)
	cs := kinds.CloneSet("web", ns).Replicas(2).Image(imageV1).TemplateLabel("hold", "true").
		Partition(intstr.FromString("99%")).MaxUnavailable(intstr.FromString("50%")).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj()
	cs.Spec.Lifecycle = &appspub.Lifecycle{InPlaceUpdate: holdWith(map[string]string{"hold": "true"})}
	create(t, cs)
	waitSettled(t, ns, "web", 2, settle)

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	var held string
	framework.Eventually(t, settle, "one pod held in PreparingUpdate by the inPlaceUpdate hook", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "web")
		if err != nil {
			return err
		}
		held = ""
		for i := range pods {
			if state(&pods[i]) == appspub.LifecycleStatePreparingUpdate {
				held = pods[i].Name
			}
		}
		if held == "" {
			return fmt.Errorf("no pod in PreparingUpdate")
		}
		return nil
	})

	// wantCounts waits until updated pods are at the update revision, current at the current
	// one, and preparing of them in PreparingUpdate.
	wantCounts := func(updated, current, preparing int, why string) {
		t.Helper()
		framework.Eventually(t, settle, why, func(ctx context.Context) error {
			st := getCloneSet(t, ns, "web").Status
			pods, err := framework.LivePods(ctx, env.Client, ns, "web")
			if err != nil {
				return err
			}
			var u, c, p int
			for i := range pods {
				if pods[i].Labels["controller-revision-hash"] == st.UpdateRevision {
					u++
				} else {
					c++
				}
				if state(&pods[i]) == appspub.LifecycleStatePreparingUpdate {
					p++
				}
			}
			if u != updated || c != current || p != preparing {
				return fmt.Errorf("%d updated, %d current, %d in PreparingUpdate; want %d, %d, %d", u, c, p, updated, current, preparing)
			}
			return nil
		})
	}
	// The other pod is deleted: its replacement is at the current revision.
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		if p.Name != held {
			framework.Delete(t, env.Client, &p)
		}
	}
	wantCounts(0, 2, 1, "the deleted pod replaced at the current revision: the held pod counts as updated, so the partition wants it")

	// Scaling up to 3 (partition 99% keeps 2): the new pod is at the current revision too.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](3) })
	wantCounts(0, 3, 1, "the scaled-up pod at the current revision")

	// Released by its hook, the held pod updates.
	release(t, ns, held)
	wantCounts(1, 2, 0, "the released pod updated, the other two at the current revision")

	// Without a partition the other two go to PreparingUpdate, and update once released.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		all := intstr.FromString("100%")
		cs.Spec.UpdateStrategy.Partition, cs.Spec.UpdateStrategy.MaxUnavailable = nil, &all
	})
	wantCounts(1, 2, 2, "the two current pods held in PreparingUpdate")
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		if p.Name != held {
			release(t, ns, p.Name)
		}
	}
	wantCounts(3, 0, 0, "every pod updated")
}

// claimSizes maps the CloneSet's live claims to their requested sizes.
func claimSizes(ctx context.Context, ns string) (map[string]string, error) {
	claims, err := framework.LiveClaims(ctx, env.Client, ns)
	out := map[string]string{}
	for _, c := range claims {
		out[c.Name] = c.Spec.Resources.Requests.Storage().String()
	}
	return out, err
}

// podsAndClaims waits until the CloneSet runs replicas pods at image, each mounting its
// instance's claim at size and no other claim left, and returns the pods' UIDs and the claims.
func podsAndClaims(t *testing.T, ns string, replicas int32, image, size string) (uids map[types.UID]bool, claims []string) {
	t.Helper()
	waitSettledAt(t, ns, "web", replicas, image, settle)
	framework.Eventually(t, settle, fmt.Sprintf("%d claims of %s, one per pod", replicas, size), func(ctx context.Context) error {
		sizes, err := claimSizes(ctx, ns)
		if err != nil {
			return err
		}
		pods, err := framework.LivePods(ctx, env.Client, ns, "web")
		if err != nil {
			return err
		}
		uids, claims = map[types.UID]bool{}, nil
		for i := range pods {
			uids[pods[i].UID] = true
			claim := claimOf(&pods[i], "data")
			if sizes[claim] != size {
				return fmt.Errorf("pod %s mounts claim %q of size %q, want %s (claims %v)", pods[i].Name, claim, sizes[claim], size, sizes)
			}
			claims = append(claims, claim)
		}
		if len(sizes) != len(pods) {
			return fmt.Errorf("claims %v for %d pods", sizes, len(pods))
		}
		sort.Strings(claims)
		return nil
	})
	return uids, claims
}

func TestCloneSetUpdateWithVolumeClaimTemplateChanges(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).Image(imageV1).VolumeClaimTemplate("data", "1Gi").
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	uids, claims := podsAndClaims(t, ns, 2, imageV1, "1Gi")
	size := func(s string) func(*appsv1alpha1.CloneSet) {
		return func(cs *appsv1alpha1.CloneSet) {
			cs.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(s)
		}
	}
	image := func(i string) func(*appsv1alpha1.CloneSet) {
		return func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = i }
	}
	steps := []struct {
		name                string
		change              []func(*appsv1alpha1.CloneSet)
		strategy            appsv1alpha1.CloneSetUpdateStrategyType
		image, size         string
		recreated, newClaim bool
	}{
		{name: "an image change with a claim template change recreates the pods with new claims",
			change: []func(*appsv1alpha1.CloneSet){image(imageV2), size("2Gi")}, image: imageV2, size: "2Gi", recreated: true, newClaim: true},
		{name: "a claim template change alone makes no new revision: pods and claims stay",
			change: []func(*appsv1alpha1.CloneSet){size("3Gi")}, image: imageV2, size: "2Gi"},
		{name: "an image change after that claim template change recreates the pods with claims of it",
			change: []func(*appsv1alpha1.CloneSet){image(imageV1)}, image: imageV1, size: "3Gi", recreated: true, newClaim: true},
		{name: "InPlaceOnly updates the image in place whatever the claim templates say",
			strategy: appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType,
			change:   []func(*appsv1alpha1.CloneSet){image(imageV2), size("4Gi")}, image: imageV2, size: "3Gi"},
	}
	for _, st := range steps {
		change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
			for _, f := range st.change {
				f(cs)
			}
			if st.strategy != "" {
				cs.Spec.UpdateStrategy.Type = st.strategy
			}
		})
		newUIDs, newClaims := podsAndClaims(t, ns, 2, st.image, st.size)
		for uid := range newUIDs {
			if uids[uid] == st.recreated {
				t.Fatalf("%s: pod %s recreated %v, want %v", st.name, uid, !uids[uid], st.recreated)
			}
		}
		if sameClaims := slices.Equal(claims, newClaims); sameClaims == st.newClaim {
			t.Fatalf("%s: claims %v after %v, want new ones %v", st.name, newClaims, claims, st.newClaim)
		}
		uids, claims = newUIDs, newClaims
	}
}

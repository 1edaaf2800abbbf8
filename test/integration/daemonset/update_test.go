package daemonset

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func setImage(image string) func(*appsv1alpha1.DaemonSet) {
	return func(ds *appsv1alpha1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = image }
}

func TestShouldOnlyInplaceImageIfUpdateDaemonsetImageWithInplaceUpdateStrategy(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("inplace", ns).Image(imageV1).RollingUpdateType(appsv1alpha1.InplaceRollingUpdateType).Obj())
	before := waitRolledOut(t, ns, "inplace", imageV1, nodes, framework.Medium)
	oldImageID := map[string]string{}
	for _, p := range before {
		oldImageID[p.Name] = framework.ContainerStatus(&p, "main").ImageID
	}

	s := sample(ns, "inplace", nodes)
	change(t, ns, "inplace", setImage(imageV2))
	after := waitRolledOut(t, ns, "inplace", imageV2, nodes, rollout)
	s.finish()
	t.Logf("sampled %d times: at most %d nodes without a serving pod", s.samples, s.maxUnavailable)
	if s.maxUnavailable > 1 {
		t.Errorf("%d nodes were without a serving pod at once; maxUnavailable is 1", s.maxUnavailable)
	}
	if s.maxTotal > len(nodes) {
		t.Errorf("%d pods at once; an in-place update creates none", s.maxTotal)
	}
	hash := getDaemonSet(t, ns, "inplace").Status.DaemonSetHash
	ids := framework.PodUIDs(before)
	for _, p := range after {
		if ids[p.Name] != p.UID {
			t.Errorf("pod %s is new; an image change must keep the pod", p.Name)
			continue
		}
		cst := framework.ContainerStatus(&p, "main")
		if cst.RestartCount != 1 || cst.ImageID == oldImageID[p.Name] {
			t.Errorf("pod %s: restartCount %d, imageID %s (was %s); want the container restarted on the new image", p.Name, cst.RestartCount, cst.ImageID, oldImageID[p.Name])
		}
		if revisionHash(&p) != hash {
			t.Errorf("pod %s: revision %q, want %q", p.Name, revisionHash(&p), hash)
		}
		if _, ok := p.Annotations[appspub.InPlaceUpdateStateKey]; !ok {
			t.Errorf("pod %s: no %s annotation", p.Name, appspub.InPlaceUpdateStateKey)
		}
	}
}

func TestShouldUpgradeInplaceIfUpdateImageAndRecreateIfUpdateOthers(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("mixed", ns).Image(imageV1).RollingUpdateType(appsv1alpha1.InplaceRollingUpdateType).Obj())
	before := waitRolledOut(t, ns, "mixed", imageV1, nodes, framework.Medium)

	change(t, ns, "mixed", setImage(imageV2))
	inPlace := waitRolledOut(t, ns, "mixed", imageV2, nodes, rollout)
	ids := framework.PodUIDs(before)
	for _, p := range inPlace {
		if ids[p.Name] != p.UID {
			t.Errorf("pod %s is new after an image change; it must be updated in place", p.Name)
		}
	}

	s := sample(ns, "mixed", nodes)
	change(t, ns, "mixed", func(ds *appsv1alpha1.DaemonSet) {
		ds.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	})
	recreated := waitRolledOut(t, ns, "mixed", imageV2, nodes, rollout)
	s.finish()
	ids = framework.PodUIDs(inPlace)
	for _, p := range recreated {
		if _, old := ids[p.Name]; old {
			t.Errorf("pod %s survived an env change; it must be recreated", p.Name)
		}
		if len(p.Spec.Containers[0].Env) != 1 {
			t.Errorf("pod %s: env %v, want MODE", p.Name, p.Spec.Containers[0].Env)
		}
	}
	if s.maxUnavailable > 1 || s.maxPerNode > 1 {
		t.Errorf("recreate: %d nodes without a serving pod and %d pods on one node at worst; want at most 1 and 1", s.maxUnavailable, s.maxPerNode)
	}
}

func TestStandardRollingUpdateKeepsWithinMaxUnavailable(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("standard", ns).Image(imageV1).MaxUnavailable(intstr.FromInt32(2)).Obj())
	before := waitRolledOut(t, ns, "standard", imageV1, nodes, framework.Medium)

	s := sample(ns, "standard", nodes)
	change(t, ns, "standard", setImage(imageV2))
	after := waitRolledOut(t, ns, "standard", imageV2, nodes, rollout)
	s.finish()
	t.Logf("sampled %d times: at most %d nodes without a serving pod, %d pods on one node", s.samples, s.maxUnavailable, s.maxPerNode)
	if s.maxUnavailable > 2 {
		t.Errorf("%d nodes were without a serving pod at once; maxUnavailable is 2", s.maxUnavailable)
	}
	if s.maxPerNode > 1 {
		t.Errorf("%d pods on one node; without surge a node has one", s.maxPerNode)
	}
	ids := framework.PodUIDs(before)
	for _, p := range after {
		if _, old := ids[p.Name]; old {
			t.Errorf("pod %s was kept; Standard recreates", p.Name)
		}
	}
}

func TestShouldSuccessfullySurgingUpdateDaemonsetWithMinReadySeconds(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("surge", ns).Image(imageV1).
		MaxUnavailable(intstr.FromInt32(0)).MaxSurge(intstr.FromInt32(1)).MinReadySeconds(2).Obj())
	waitRolledOut(t, ns, "surge", imageV1, nodes, framework.Medium)

	s := sample(ns, "surge", nodes)
	change(t, ns, "surge", setImage(imageV2))
	waitRolledOut(t, ns, "surge", imageV2, nodes, rollout)
	s.finish()
	t.Logf("sampled %d times: at most %d nodes without a serving pod, %d pods on one node, %d in all", s.samples, s.maxUnavailable, s.maxPerNode, s.maxTotal)
	if s.maxUnavailable != 0 {
		t.Errorf("%d nodes were without a serving pod; a surge keeps every node served", s.maxUnavailable)
	}
	if s.maxTotal > len(nodes)+1 || s.maxPerNode > 2 {
		t.Errorf("%d pods in all and %d on one node at worst; maxSurge 1 allows %d and 2", s.maxTotal, s.maxPerNode, len(nodes)+1)
	}
	if s.maxPerNode < 2 {
		t.Errorf("never two pods on a node: the new pod did not come up next to the old one")
	}
}

func TestShouldUpgradeOneByOneOnStepsIfThereIsPreDeleteHook(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	const hook = "example.com/hold"
	ds := kinds.DaemonSet("hooked", ns).Image(imageV1).PreDeleteHook(hook, "true").Obj()
	ds.Spec.Template.Labels[hook] = "true"
	createDaemonSet(t, ds)
	waitRolledOut(t, ns, "hooked", imageV1, nodes, framework.Medium)
	change(t, ns, "hooked", setImage(imageV2))

	for step := range nodes {
		var held corev1.Pod
		framework.Eventually(t, framework.Medium, fmt.Sprintf("step %d: one old pod waits in PreparingDelete", step), func(ctx context.Context) error {
			pods, err := framework.LivePods(ctx, env.Client, ns, "hooked")
			if err != nil {
				return err
			}
			var preparing []corev1.Pod
			for _, p := range pods {
				if p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStatePreparingDelete) {
					preparing = append(preparing, p)
				}
			}
			if len(preparing) > 1 {
				t.Fatalf("step %d: %d pods in PreparingDelete at once; maxUnavailable is 1", step, len(preparing))
			}
			if len(preparing) == 0 {
				return fmt.Errorf("none in PreparingDelete")
			}
			held = preparing[0]
			return nil
		})
		if held.Spec.Containers[0].Image != imageV1 {
			t.Fatalf("step %d: pod %s in PreparingDelete runs %s; only old pods go", step, held.Name, held.Spec.Containers[0].Image)
		}
		// While the hook holds it, the pod stays.
		framework.Consistently(t, time.Second, "the held pod stays", func(ctx context.Context) error {
			p := &corev1.Pod{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&held), p); err != nil {
				return err
			}
			return framework.Want(p.DeletionTimestamp == nil, "deleted while the hook holds it")
		})
		// The operator lets go: the pod goes and its node gets a new one.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+hook+`":null}}}`))
		if err := env.Client.Patch(context.Background(), &held, patch); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, framework.Medium, fmt.Sprintf("step %d: node %s serves the new image", step, held.Spec.NodeName), func(ctx context.Context) error {
			pods, err := framework.LivePods(ctx, env.Client, ns, "hooked")
			if err != nil {
				return err
			}
			for _, p := range byNode(pods)[held.Spec.NodeName] {
				if p.Spec.Containers[0].Image == imageV2 && servingPod(&p) {
					return nil
				}
			}
			return fmt.Errorf("no serving new pod on %s", held.Spec.NodeName)
		})
	}
	waitRolledOut(t, ns, "hooked", imageV2, nodes, framework.Medium)
}

func TestPartitionKeepsNodesAtTheOldRevision(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("part", ns).Image(imageV1).Partition(3).Obj())
	waitRolledOut(t, ns, "part", imageV1, nodes, framework.Medium)

	change(t, ns, "part", setImage(imageV2))
	framework.Eventually(t, rollout, "one node updated, three kept by the partition", func(ctx context.Context) error {
		ds := getDaemonSet(t, ns, "part")
		st := ds.Status
		return framework.Want(st.ObservedGeneration == ds.Generation && st.UpdatedNumberScheduled == 1 && st.NumberAvailable == 4,
			fmt.Sprintf("status %+v", st))
	})
	framework.Consistently(t, 2*time.Second, "the partition holds", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "part")
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods {
			if p.Spec.Containers[0].Image == imageV2 {
				n++
			}
		}
		return framework.Want(n <= 1, fmt.Sprintf("%d pods at the new image", n))
	})
	change(t, ns, "part", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0) })
	waitRolledOut(t, ns, "part", imageV2, nodes, rollout)
}

func TestRollingUpdateSelectorUpdatesNodeBatches(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	key := "batch." + ns
	for _, n := range nodes[:2] {
		changeNode(t, n, func(node *corev1.Node) { node.Labels[key] = "canary" })
		t.Cleanup(func() { changeNode(t, n, func(node *corev1.Node) { delete(node.Labels, key) }) })
	}
	createDaemonSet(t, kinds.DaemonSet("batches", ns).Image(imageV1).MaxUnavailable(intstr.FromInt32(4)).
		UpdateSelector(map[string]string{key: "canary"}).Obj())
	waitRolledOut(t, ns, "batches", imageV1, nodes, framework.Medium)

	change(t, ns, "batches", setImage(imageV2))
	framework.Eventually(t, rollout, "the canary nodes are updated", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "batches")
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, p := range pods {
			if servingPod(&p) {
				got[p.Spec.NodeName] = p.Spec.Containers[0].Image
			}
		}
		want := map[string]string{nodes[0]: imageV2, nodes[1]: imageV2, nodes[2]: imageV1, nodes[3]: imageV1}
		return framework.Want(fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("images by node %v", got))
	})
	change(t, ns, "batches", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Selector = nil })
	waitRolledOut(t, ns, "batches", imageV2, nodes, rollout)
}

func TestPausedRollingUpdateStopsAndReadsSuspended(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("paused", ns).Image(imageV1).Paused(true).Obj())
	waitRolledOut(t, ns, "paused", imageV1, nodes, framework.Medium)

	change(t, ns, "paused", setImage(imageV2))
	framework.Eventually(t, framework.Medium, "the controller saw the new template", func(ctx context.Context) error {
		ds := getDaemonSet(t, ns, "paused")
		return framework.Want(ds.Status.ObservedGeneration == ds.Generation && ds.Status.UpdatedNumberScheduled == 0, fmt.Sprintf("status %+v", ds.Status))
	})
	framework.Consistently(t, 2*time.Second, "no pod is updated while paused", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "paused")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.Containers[0].Image != imageV1 {
				return fmt.Errorf("pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
			}
		}
		return framework.Want(len(pods) == len(nodes), fmt.Sprintf("%d pods", len(pods)))
	})
	change(t, ns, "paused", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Paused = ptr.To(false) })
	waitRolledOut(t, ns, "paused", imageV2, nodes, rollout)
}

func TestShouldImplementOnDeleteReplacement(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	createDaemonSet(t, kinds.DaemonSet("ondelete", ns).Image(imageV1).OnDelete().Obj())
	before := waitRolledOut(t, ns, "ondelete", imageV1, nodes, framework.Medium)

	change(t, ns, "ondelete", setImage(imageV2))
	framework.Eventually(t, framework.Medium, "the controller saw the new template", func(ctx context.Context) error {
		ds := getDaemonSet(t, ns, "ondelete")
		return framework.Want(ds.Status.ObservedGeneration == ds.Generation, fmt.Sprintf("status %+v", ds.Status))
	})
	framework.Consistently(t, 2*time.Second, "OnDelete replaces nothing by itself", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "ondelete")
		if err != nil {
			return err
		}
		return framework.Want(fmt.Sprint(framework.PodUIDs(pods)) == fmt.Sprint(framework.PodUIDs(before)), "pods changed")
	})
	victim := before[0]
	framework.Delete(t, env.Client, &victim)
	framework.Eventually(t, framework.Medium, "the deleted pod's node runs the new image", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "ondelete")
		if err != nil {
			return err
		}
		for _, p := range byNode(pods)[victim.Spec.NodeName] {
			if p.UID != victim.UID && p.Spec.Containers[0].Image == imageV2 && servingPod(&p) {
				return nil
			}
		}
		return fmt.Errorf("no serving new pod on %s", victim.Spec.NodeName)
	})
	if n := getDaemonSet(t, ns, "ondelete").Status.UpdatedNumberScheduled; n > 1 {
		t.Errorf("updatedNumberScheduled %d; only the deleted pod was replaced", n)
	}
}

func TestRevisionHistoryIsKeptWithinItsLimitAndReusedOnRollback(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	ds := kinds.DaemonSet("history", ns).Image(imageV1).MaxUnavailable(intstr.FromString("100%")).Obj()
	ds.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	createDaemonSet(t, ds)
	waitRolledOut(t, ns, "history", imageV1, nodes, framework.Medium)
	first := getDaemonSet(t, ns, "history").Status.DaemonSetHash

	for _, img := range []string{imageV2, imageV3} {
		change(t, ns, "history", setImage(img))
		waitRolledOut(t, ns, "history", img, nodes, rollout)
	}
	framework.Eventually(t, framework.Medium, "old revisions beyond the limit are deleted", func(ctx context.Context) error {
		var revs appsv1.ControllerRevisionList
		if err := env.Client.List(ctx, &revs, client.InNamespace(ns), client.MatchingLabels{"app": "history"}); err != nil {
			return err
		}
		// The revision in use plus one of history.
		return framework.Want(len(revs.Items) == 2, fmt.Sprintf("%d revisions", len(revs.Items)))
	})

	// A rollback to the first template gets the first template's hash back.
	change(t, ns, "history", setImage(imageV1))
	waitRolledOut(t, ns, "history", imageV1, nodes, rollout)
	if got := getDaemonSet(t, ns, "history").Status.DaemonSetHash; got != first {
		t.Errorf("daemonSetHash %q after a rollback, want the first template's %q", got, first)
	}
}

func TestPreNormalHookHoldsNewPodsUntilTheyCarryIt(t *testing.T) {
	ns := newNamespace(t)
	const fin = "example.com/registered"
	ds := kinds.DaemonSet("prenormal", ns).Image(imageV1).Obj()
	ds.Spec.Lifecycle = &appspub.Lifecycle{PreNormal: &appspub.LifecycleHook{FinalizersHandler: []string{fin}}}
	createDaemonSet(t, ds)
	var pods []corev1.Pod
	framework.Eventually(t, framework.Medium, "every node has a pod in PreparingNormal", func(ctx context.Context) error {
		var err error
		if pods, err = framework.LivePods(ctx, env.Client, ns, "prenormal"); err != nil {
			return err
		}
		for _, p := range pods {
			if p.Labels[appspub.LifecycleStateKey] != string(appspub.LifecycleStatePreparingNormal) {
				return fmt.Errorf("pod %s in %q", p.Name, p.Labels[appspub.LifecycleStateKey])
			}
		}
		return framework.Want(len(pods) == baseNodes, fmt.Sprintf("%d pods", len(pods)))
	})
	// The operator registers one pod: only that one goes to Normal.
	first := pods[0]
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["`+fin+`"]}}`))
	if err := env.Client.Patch(context.Background(), &first, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Let the pod go when the DaemonSet is deleted.
		_ = env.Client.Patch(context.Background(), &first, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	})
	framework.Eventually(t, framework.Medium, "the registered pod goes to Normal", func(ctx context.Context) error {
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&first), p); err != nil {
			return err
		}
		return framework.Want(p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStateNormal), "state "+p.Labels[appspub.LifecycleStateKey])
	})
	for _, p := range framework.MustLivePods(t, env.Client, ns, "prenormal") {
		if p.Name != first.Name && p.Labels[appspub.LifecycleStateKey] != string(appspub.LifecycleStatePreparingNormal) {
			t.Errorf("pod %s left PreparingNormal without carrying the hook's finalizer", p.Name)
		}
	}
}

package workloadspread

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestCloneSetPodsSpreadOverThreeZones(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, kinds.WorkloadSpread("web", ns).Target("apps.kruise.io/v1alpha1", "CloneSet", "web").
		ZoneSubset("a", "zone-a", "1").ZoneSubset("b", "zone-b", "2").ZoneSubset("c", "zone-c", "").
		SubsetPatch(`{"metadata":{"labels":{"spot":"true"}}}`).Obj())
	framework.Create(t, env.Client, kinds.CloneSet("web", ns).Replicas(6).Obj())

	pods := spreadIs(t, ns, "web", map[string]int{"a": 1, "b": 2, "c": 3})
	for _, p := range pods {
		if got, inC := p.Labels["spot"], strings.Contains(p.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations], `"subset":"c"`); (got == "true") != inC {
			t.Errorf("pod %s: spot label %q, in subset c %v; the patch of subset c applies to its pods only", p.Name, got, inC)
		}
	}
	statusesAre(t, ns, "web", "a 1/0 0+0, b 2/0 0+0, c 3/-1 0+0")
}

func TestDeploymentPodsSpreadByPercentage(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	// 20% and 30% of 6, rounded up, are 2 each; the rest go to c.
	framework.Create(t, env.Client, percentSpread(ns, "apps/v1", "Deployment", "api"))
	// The pods may come before or after the controller has seen the Deployment: the webhook
	// takes the percentages of the Deployment it reads at admission (every order is played by
	// TestWorkloadSpreadAppliedWithItsDeploymentSpreadsByPercentageInAnyOrder).
	framework.Create(t, env.Client, deployment("api", ns, 6))
	spreadIs(t, ns, "api", map[string]int{"a": 2, "b": 2, "c": 2})
	statusesAre(t, ns, "api", "a 2/0 0+0, b 2/0 0+0, c 2/-1 0+0")
}

func TestAdvancedStatefulSetPodsTakeSubsetsByOrdinal(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, kinds.WorkloadSpread("db", ns).Target("apps.kruise.io/v1beta1", "StatefulSet", "db").
		ZoneSubset("a", "zone-a", "2").ZoneSubset("b", "zone-b", "2").ZoneSubset("c", "zone-c", "").Obj())
	// Ordinal 1 is reserved, so the pods are db-0 and db-2 to db-5: by ordinal, db-2 falls in b
	// although a has room, which a count would not do.
	framework.Create(t, env.Client, kinds.StatefulSet("db", ns).Replicas(5).ReserveOrdinals(intstr.FromInt32(1)).Obj())

	var pods []corev1.Pod
	framework.Eventually(t, framework.Medium, "five pods Ready in their subsets' zones", func(ctx context.Context) error {
		var err error
		pods, err = placedPods(ctx, ns, "db", 5)
		return err
	})
	got := map[string]string{}
	for i := range pods {
		got[pods[i].Name] = pods[i].Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations]
	}
	want := map[string]string{}
	for pod, s := range map[string]string{"db-0": "a", "db-2": "b", "db-3": "b", "db-4": "c", "db-5": "c"} {
		want[pod] = fmt.Sprintf(`{"name":"db","subset":"%s"}`, s)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subsets by pod (-want +got):\n%s", diff)
	}
}

func TestPodsThatPredateTheSpreadJoinTheSubsetOfTheirNode(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, kinds.CloneSet("old", ns).Replicas(6).Obj())
	framework.Eventually(t, framework.Medium, "six pods Ready", func(ctx context.Context) error {
		pods, err := livePods(ctx, ns, "old")
		if err != nil {
			return err
		}
		ready := 0
		for i := range pods {
			if podReady(&pods[i]) {
				ready++
			}
		}
		return framework.Want(ready == 6, fmt.Sprintf("%d of %d pods Ready", ready, len(pods)))
	})
	framework.Create(t, env.Client, kinds.WorkloadSpread("old", ns).Target("apps.kruise.io/v1alpha1", "CloneSet", "old").
		ZoneSubset("a", "zone-a", "").ZoneSubset("b", "zone-b", "").ZoneSubset("c", "zone-c", "").
		SubsetPatch(`{"metadata":{"labels":{"zone":"c"}}}`).Obj())
	framework.Eventually(t, framework.Medium, "every pod in the subset of its node's zone", func(ctx context.Context) error {
		pods, err := placedPods(ctx, ns, "old", 6)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if zoneOfNode(p.Spec.NodeName) == "zone-c" && p.Labels["zone"] != "c" {
				return fmt.Errorf("pod %s in zone-c lacks the label of subset c's patch", p.Name)
			}
		}
		return nil
	})
}

func TestAdaptiveMovesUnschedulablePodsToTheNextSubset(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	// Subset a asks for a zone no node is in: the real kube-scheduler leaves its pods
	// unschedulable, and after two seconds the controller gives them to b.
	framework.Create(t, env.Client, kinds.WorkloadSpread("move", ns).Target("apps.kruise.io/v1alpha1", "CloneSet", "move").
		ZoneSubset("a", "zone-nowhere", "2").ZoneSubset("b", "zone-b", "").Adaptive(2).Obj())
	framework.Create(t, env.Client, kinds.CloneSet("move", ns).Replicas(4).Obj())
	framework.Eventually(t, framework.Medium, "four pods Ready in subset b", func(ctx context.Context) error {
		pods, err := placedPods(ctx, ns, "move", 4)
		if err != nil {
			return err
		}
		got := bySubset(pods)
		return framework.Want(got["b"] == 4, fmt.Sprintf("pods per subset %v", got))
	})
	ws, err := getSpread(context.Background(), ns, "move")
	must(t, err)
	var cond string
	for _, c := range ws.Status.SubsetStatuses[0].Conditions {
		if c.Type == appsv1alpha1.SubsetSchedulable {
			cond = string(c.Status)
		}
	}
	if cond != "False" {
		t.Errorf("subset a Schedulable = %q, want False while it is skipped", cond)
	}
}

func TestPercentageSubsetsFollowTheTargetsReplicas(t *testing.T) {
	ns, job := spreadJob(t, "grow", 2, func(ws *kinds.WorkloadSpreadBuilder) *kinds.WorkloadSpreadBuilder {
		return ws.ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "50%")
	})
	for _, name := range []string{"grow-0", "grow-1"} {
		framework.Create(t, env.Client, jobPod(job, name))
	}
	framework.Eventually(t, framework.Medium, "both pods Ready, so their events are over", func(ctx context.Context) error {
		_, err := placedPods(ctx, ns, "grow", 2)
		return err
	})
	statusesAre(t, ns, "grow", "a 1/0 0+0, b 1/0 0+0")
	// Only the Job changes: no pod event tells the controller.
	framework.Eventually(t, framework.Short, "raise the Job's parallelism", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		job.Spec.Parallelism = ptr.To[int32](4)
		return env.Client.Update(ctx, job)
	})
	statusesAre(t, ns, "grow", "a 1/1 0+0, b 1/1 0+0")
}

func TestADryRunCreationIsPlacedButNotRecorded(t *testing.T) {
	ctx := context.Background()
	ns, job := spreadJob(t, "dry", 2, func(ws *kinds.WorkloadSpreadBuilder) *kinds.WorkloadSpreadBuilder {
		return ws.ZoneSubset("a", "zone-a", "1").ZoneSubset("b", "zone-b", "")
	})
	statusesAre(t, ns, "dry", "a 0/1 0+0, b 0/-1 0+0")
	pod := jobPod(job, "dry-0")
	must(t, env.Client.Create(ctx, pod, client.DryRunAll))
	if got := pod.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations]; got != `{"name":"dry","subset":"a"}` {
		t.Errorf("dry-run pod annotation = %q, want subset a", got)
	}
	// A recorded creation would stay in creatingPods for 30s, since the pod never appears; the
	// webhook writes before it answers, so one read now tells.
	ws, err := getSpread(ctx, ns, "dry")
	must(t, err)
	if got := subsetSummary(ws); got != "a 0/1 0+0, b 0/-1 0+0" {
		t.Errorf("subset statuses after a dry run: %s, want them untouched", got)
	}
}

func TestConcurrentCreationsNeverOverfillASubset(t *testing.T) {
	ctx := context.Background()
	// 20% and 30% of the Job's parallelism of 50: 10 and 15.
	ns, job := spreadJob(t, "burst", 50, func(ws *kinds.WorkloadSpreadBuilder) *kinds.WorkloadSpreadBuilder {
		return ws.ZoneSubset("a", "zone-a", "20%").ZoneSubset("b", "zone-b", "30%").ZoneSubset("c", "zone-c", "")
	})

	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		// Half named, half from generateName as ReplicaSets create them.
		name := fmt.Sprintf("burst-%d", i)
		if i%2 == 1 {
			name = "burst-gen-"
		}
		wg.Go(func() {
			if err := env.Client.Create(ctx, jobPod(job, name)); err != nil {
				errs <- fmt.Errorf("create %s: %w", name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	pods, err := livePods(ctx, ns, "burst")
	must(t, err)
	if diff := cmp.Diff(map[string]int{"a": 10, "b": 15, "c": 25}, bySubset(pods)); diff != "" {
		t.Errorf("pods per subset after 50 concurrent creations (-want +got):\n%s", diff)
	}
	statusesAre(t, ns, "burst", "a 10/0 0+0, b 15/0 0+0, c 25/-1 0+0")
}

func TestScaleDownRemovesThePodsOfTheLastSubsetsAndTheExtrasFirst(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, kinds.WorkloadSpread("shrink", ns).Target("apps.kruise.io/v1alpha1", "CloneSet", "shrink").
		ZoneSubset("a", "zone-a", "2").ZoneSubset("b", "zone-b", "2").ZoneSubset("c", "zone-c", "").Obj())
	framework.Create(t, env.Client, kinds.CloneSet("shrink", ns).Replicas(6).Obj())

	// costsAre waits for every pod Ready in its zone and carrying the deletion cost of its subset.
	costsAre := func(want map[string]int, cost map[string]string) {
		t.Helper()
		framework.Eventually(t, framework.Medium, fmt.Sprintf("pods %v with costs %v", want, cost), func(ctx context.Context) error {
			pods, err := livePods(ctx, ns, "shrink")
			if err != nil {
				return err
			}
			n := 0
			for _, c := range want {
				n += c
			}
			if err := readyAndPlaced(pods, n); err != nil {
				return err
			}
			if got := bySubset(pods); !cmp.Equal(want, got) {
				return fmt.Errorf("pods per subset %v", got)
			}
			costs := map[string]int{}
			for _, p := range pods {
				costs[p.Annotations[deletionCost]]++
			}
			wantCosts := map[string]int{}
			for s, c := range cost {
				wantCosts[c] += want[s]
			}
			return framework.Want(cmp.Equal(wantCosts, costs), fmt.Sprintf("pods per deletion cost %v, want %v", costs, wantCosts))
		})
	}
	costsAre(map[string]int{"a": 2, "b": 2, "c": 2}, map[string]string{"a": "300", "b": "200", "c": "100"})

	scale := func(n int32) {
		t.Helper()
		cs := &appsv1alpha1.CloneSet{}
		framework.Eventually(t, framework.Short, "scale the CloneSet", func(ctx context.Context) error {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shrink"}, cs); err != nil {
				return err
			}
			cs.Spec.Replicas = ptr.To(n)
			return env.Client.Update(ctx, cs)
		})
	}
	// Down to 3: c's two pods go, then one of b's.
	scale(3)
	costsAre(map[string]int{"a": 2, "b": 1}, map[string]string{"a": "300", "b": "200"})

	// Subset a shrinks to 1: one of its pods is now extra and costs -100, so it goes first.
	framework.Eventually(t, framework.Short, "lower subset a's maxReplicas", func(ctx context.Context) error {
		ws, err := getSpread(ctx, ns, "shrink")
		if err != nil {
			return err
		}
		ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstrOf(1))
		return env.Client.Update(ctx, ws)
	})
	framework.Eventually(t, framework.Medium, "one pod of a costs -100", func(ctx context.Context) error {
		pods, err := livePods(ctx, ns, "shrink")
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods {
			if p.Annotations[deletionCost] == "-100" {
				n++
			}
		}
		return framework.Want(n == 1, fmt.Sprintf("%d pods cost -100", n))
	})
	scale(2)
	costsAre(map[string]int{"a": 1, "b": 1}, map[string]string{"a": "300", "b": "200"})
}

func TestDeleteAndEvictionAreRecordedInTheirSubset(t *testing.T) {
	ctx := context.Background()
	ns, job := spreadJob(t, "books", 3, func(ws *kinds.WorkloadSpreadBuilder) *kinds.WorkloadSpreadBuilder {
		return ws.ZoneSubset("a", "zone-a", "2").ZoneSubset("c", "zone-c", "")
	})
	for _, name := range []string{"books-0", "books-1", "books-2"} {
		framework.Create(t, env.Client, jobPod(job, name))
	}
	statusesAre(t, ns, "books", "a 2/0 0+0, c 1/-1 0+0")
	pods, err := livePods(ctx, ns, "books")
	must(t, err)
	var inA []string
	for i := range pods {
		if strings.Contains(pods[i].Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations], `"subset":"a"`) {
			inA = append(inA, pods[i].Name)
		}
	}
	if len(inA) != 2 {
		t.Fatalf("pods of subset a: %v", inA)
	}

	// Every write to the WorkloadSpread is seen on a watch, so the webhook's record of the
	// deletion is seen even when the controller drops it a moment later.
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	must(t, err)
	recorded := func(pod string, act func()) {
		t.Helper()
		ws, err := getSpread(ctx, ns, "books")
		must(t, err)
		list := &appsv1alpha1.WorkloadSpreadList{}
		w, err := wc.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: ws.ResourceVersion}})
		must(t, err)
		defer w.Stop()
		act()
		err = framework.PollUntil(ctx, framework.Medium, func(context.Context) error {
			select {
			case ev := <-w.ResultChan():
				if ev.Type != watch.Modified {
					return fmt.Errorf("event %s", ev.Type)
				}
				got := ev.Object.(*appsv1alpha1.WorkloadSpread)
				for _, s := range got.Status.SubsetStatuses {
					if _, ok := s.DeletingPods[pod]; ok && s.Name == "a" {
						return nil
					}
				}
				return fmt.Errorf("no deletingPods record of %s in a: %s", pod, subsetSummary(got))
			default:
				return fmt.Errorf("no event yet")
			}
		})
		if err != nil {
			t.Fatalf("the deletion of %s is recorded in subset a: %v", pod, err)
		}
	}
	recorded(inA[0], func() {
		must(t, env.Client.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: inA[0]}}))
	})
	recorded(inA[1], func() {
		must(t, env.Clientset.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: inA[1]}}))
	})
	// With both gone, subset a has room for two again: the next pods go there.
	statusesAre(t, ns, "books", "a 0/2 0+0, c 1/-1 0+0")
	framework.Create(t, env.Client, jobPod(job, "books-3"))
	p := &corev1.Pod{}
	must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "books-3"}, p))
	if got := p.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations]; got != `{"name":"books","subset":"a"}` {
		t.Errorf("replacement pod annotation = %s, want subset a", got)
	}
}

func TestWorkloadSpreadWebhookRefusesBadSpreads(t *testing.T) {
	ctx := context.Background()
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, kinds.WorkloadSpread("first", ns).Target("apps/v1", "Deployment", "web").ZoneSubset("a", "zone-a", "").Obj())
	cases := map[string]struct {
		ws   *appsv1alpha1.WorkloadSpread
		want string
	}{
		"a duplicated subset name is named": {
			ws:   kinds.WorkloadSpread("dup", ns).Target("apps/v1", "Deployment", "other").ZoneSubset("a", "zone-a", "1").ZoneSubset("a", "zone-b", "").Obj(),
			want: "spec.subsets[1].name: Duplicate value",
		},
		"a workload held by another WorkloadSpread is refused": {
			ws:   kinds.WorkloadSpread("second", ns).Target("apps/v1", "Deployment", "web").ZoneSubset("a", "zone-a", "").Obj(),
			want: "already spread by WorkloadSpread first",
		},
		"an unsupported target kind is named": {
			ws:   kinds.WorkloadSpread("ds", ns).Target("apps/v1", "DaemonSet", "web").ZoneSubset("a", "zone-a", "").Obj(),
			want: "spec.targetRef.kind: Unsupported value",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.ws)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create = %v, want a refusal containing %q", err, tc.want)
			}
		})
	}
}

func TestKubectlGetWorkloadSpreadShowsTheColumns(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, kinds.WorkloadSpread("cols", ns).Target("apps/v1", "Deployment", "web").
		ZoneSubset("a", "zone-a", "1").ZoneSubset("c", "zone-c", "").Adaptive(30).Obj())
	ctx, cancel := context.WithTimeout(context.Background(), framework.Medium)
	defer cancel()
	out, stderr, err := env.Kubectl(ctx, "get", "ws", "cols", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get ws: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row, got:\n%s", out)
	}
	if diff := cmp.Diff([]string{"NAME", "WORKLOADNAME", "WORKLOADKIND", "ADAPTIVE", "AGE"}, strings.Fields(lines[0])); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	// The Adaptive column keeps 1.8's jsonPath, a filter over a string, which the apiserver
	// prints empty; the row is name, workload, kind and age.
	if row := strings.Fields(lines[1]); len(row) != 4 || !cmp.Equal([]string{"cols", "web", "Deployment"}, row[:3]) {
		t.Errorf("row = %q, want cols web Deployment <age>", lines[1])
	}
}

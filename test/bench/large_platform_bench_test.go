package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkLargePlatform runs kruise-manager as its own process over a platform's mix, on
// simulated nodes in two zones: CloneSets of equal size, one SidecarSet per CloneSet for the
// first SidecarSets of them (every other one injecting, the others with injection paused), and
// WorkloadSpreads (two 50% zone subsets) and PodUnavailableBudgets (minAvailable 50%) over the
// first CloneSets. Its phases, each timed and explained by the observer: every CloneSet from
// 0 to Ready; an in-place image update of every CloneSet, maxUnavailable 20%, until each
// rollout completes; an in-place sidecar image update of every injecting SidecarSet,
// maxUnavailable 20%. Baseline, in the same run: one client creating as many bare pods and the
// nodes making them Ready. It prints each phase's cost per pod against the baseline's, the
// manager's peak RSS and its anonymous and file-backed parts, and pod admission latency by
// webhook path over the run.
//
// `make bench` runs it at 1000 pods in 10 CloneSets on 100 nodes, with 10 SidecarSets, 5
// WorkloadSpreads and 5 budgets; `make bench-large` at 10,000 pods in 100 CloneSets on 1000
// nodes, with 100, 50 and 50, whose cost per pod is read against BenchmarkCloneSet1000's.
// BENCH_PLATFORM_{NODES,PODS,CLONESETS,SIDECARSETS,SPREADS,BUDGETS} change each size.
func BenchmarkLargePlatform(b *testing.B) {
	p := platform{
		nodes:       scaled("BENCH_PLATFORM_NODES", 100, 1000),
		clonesets:   scaled("BENCH_PLATFORM_CLONESETS", 10, 100),
		sidecarSets: scaled("BENCH_PLATFORM_SIDECARSETS", 10, 100),
		spreads:     scaled("BENCH_PLATFORM_SPREADS", 5, 50),
		budgets:     scaled("BENCH_PLATFORM_BUDGETS", 5, 50),
	}
	p.replicas = scaled("BENCH_PLATFORM_PODS", 1000, 10000) / p.clonesets
	n := p.replicas * p.clonesets
	runStaged(b, stageSpec{namespace: "bench-platform", nodes: p.zonedNodes(n), baseline: n,
		sim: []framework.SimOption{framework.WithImageChangeDelay(0)}}, func(ctx context.Context, st *stage) ([]string, error) {
		p.ns = st.ns
		idle := st.mgr.rssParts()
		// No garbage collector runs here: the pods go with the namespace's scenario.
		st.defer_(func() {
			_ = st.cs.CoreV1().Pods(st.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
		})
		for _, obj := range p.policies() {
			if err := st.create(ctx, obj); err != nil {
				return nil, err
			}
		}
		admBefore, admErr := st.mgr.observe.admissionLatency(ctx)
		took, explained, err := st.runPhases(ctx,
			phase{name: "platform-scaleup", what: "scale up", run: func(ctx context.Context) error {
				for _, cs := range p.cloneSets() {
					if err := st.create(ctx, cs); err != nil {
						return err
					}
				}
				return p.waitCloneSets(ctx, func(s appsv1alpha1.CloneSetStatus) bool { return int(s.ReadyReplicas) == p.replicas })
			}},
			phase{name: "platform-inplace", what: "in-place update", run: func(ctx context.Context) error {
				for i := range p.clonesets {
					if err := updateObject(ctx, client.ObjectKey{Namespace: p.ns, Name: p.cloneSetName(i)}, func(cur *appsv1alpha1.CloneSet) {
						cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/bench:2"
					}); err != nil {
						return err
					}
				}
				return p.waitCloneSets(ctx, func(s appsv1alpha1.CloneSetStatus) bool {
					return int(s.UpdatedReadyReplicas) == p.replicas && int(s.UpdatedReplicas) == p.replicas && s.UpdateRevision == s.CurrentRevision
				})
			}},
			phase{name: "platform-sidecar", what: "sidecar in-place update", run: func(ctx context.Context) error {
				for i := 0; i < p.sidecarSets; i += 2 {
					if err := updateObject(ctx, client.ObjectKey{Name: p.sidecarSetName(i)}, func(cur *appsv1alpha1.SidecarSet) {
						cur.Spec.Containers[0].Image = "registry.example.com/agent:2"
					}); err != nil {
						return err
					}
				}
				return p.waitSidecarSets(ctx)
			}},
		)
		if err != nil {
			return nil, err
		}
		admAfter, err := st.mgr.observe.admissionLatency(ctx)
		admission := []string{fmt.Sprintf("  admission latency unreadable: %v", errors.Join(admErr, err))}
		if admErr == nil && err == nil {
			admission = admAfter.minus(admBefore).lines("platform")
		}
		injected := p.injected()
		perPod := func(d time.Duration, pods int) string {
			return fmt.Sprintf("%.1f ms a pod (%.1fx the baseline's)", 1000*d.Seconds()/float64(pods), (d.Seconds()/float64(pods))/(st.base.Seconds()/float64(n)))
		}
		out := []string{
			fmt.Sprintf("platform: %d simulated nodes in 2 zones, %d CloneSets of %d pods, %d SidecarSets (%d injecting), %d WorkloadSpreads, %d PodUnavailableBudgets",
				p.nodes, p.clonesets, p.replicas, p.sidecarSets, (p.sidecarSets+1)/2, p.spreads, p.budgets),
			st.baselineLine(n),
			fmt.Sprintf("node simulator alone: %.0f pods made Ready per second; baseline cost %.1f ms a pod", float64(n)/st.base.Seconds(), 1000*st.base.Seconds()/float64(n)),
			fmt.Sprintf("every CloneSet 0 -> Ready, %d pods: %s, %s", n, st.againstBase(took[0]), perPod(took[0], n)),
			fmt.Sprintf("every CloneSet in-place image update, maxUnavailable 20%%, every rollout complete: %s, %s", st.againstBase(took[1]), perPod(took[1], n)),
			fmt.Sprintf("every injecting SidecarSet in-place sidecar update, %d pods, maxUnavailable 20%%: %v, %s", injected, took[2].Round(time.Millisecond), perPod(took[2], injected)),
			"compare the cost per pod with BenchmarkCloneSet1000's at 1000 pods (make bench-large prints both); the target is within 1.2x",
			st.rssLine() + "; target at 10,000 pods <= 400 MB",
			fmt.Sprintf("kruise-manager RSS idle, before the CloneSets: %s; at the end: %s", idle, st.mgr.rssParts()),
			"kruise-manager log: " + st.mgr.saveLog("platform-manager"),
			"pod admission latency by webhook path, over the three phases:",
		}
		out = append(out, admission...)
		return append(append(out, "where the time went:"), explained...), nil
	})
}

// platform is BenchmarkLargePlatform's mix; see there.
type platform struct {
	ns                                                        string
	nodes, clonesets, replicas, sidecarSets, spreads, budgets int
}

// zonedNodes are p.nodes simulated nodes, alternately in zone-a and zone-b, with room for
// twice n pods.
func (p platform) zonedNodes(n int) []*corev1.Node {
	perNode := int64(max(10, 2*n/p.nodes))
	var nodes []*corev1.Node
	for i := range p.nodes {
		zone := "zone-a"
		if i%2 == 1 {
			zone = "zone-b"
		}
		nodes = append(nodes, builder.Node(fmt.Sprintf("bench-platform-%d", i)).Zone(zone).Capacity("256", "1Ti", perNode).Obj())
	}
	return nodes
}

func (p platform) cloneSetName(i int) string   { return fmt.Sprintf("platform-%03d", i) }
func (p platform) sidecarSetName(i int) string { return fmt.Sprintf("bench-platform-%03d", i) }

func (p platform) cloneSets() []*appsv1alpha1.CloneSet {
	var out []*appsv1alpha1.CloneSet
	for i := range p.clonesets {
		out = append(out, kinds.CloneSet(p.cloneSetName(i), p.ns).Replicas(int32(p.replicas)).Image("registry.example.com/bench:1").
			UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).MaxUnavailable(intstr.FromString("20%")).Obj())
	}
	return out
}

// policies are the SidecarSets, WorkloadSpreads and budgets, made before the CloneSets so
// that every pod is admitted with them: SidecarSet, WorkloadSpread and budget i cover the pods
// of CloneSet i (modulo the CloneSets).
func (p platform) policies() []client.Object {
	var out []client.Object
	for i := range p.sidecarSets {
		s := benchSidecarSet(p.sidecarSetName(i), p.ns, p.cloneSetName(i%p.clonesets))
		s.Spec.InjectionStrategy.Paused = i%2 == 1
		s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("20%"))
		out = append(out, s)
	}
	for i := range p.spreads {
		out = append(out, kinds.WorkloadSpread(p.cloneSetName(i%p.clonesets), p.ns).Target(appsv1alpha1.GroupVersion.String(), "CloneSet", p.cloneSetName(i%p.clonesets)).
			ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "50%").Obj())
	}
	for i := range p.budgets {
		out = append(out, benchBudget(p.ns, p.cloneSetName(i%p.clonesets), p.cloneSetName(i%p.clonesets), intstr.FromString("50%")))
	}
	return out
}

// injected is how many pods the injecting SidecarSets inject into.
func (p platform) injected() int {
	covered := map[int]bool{}
	for i := 0; i < p.sidecarSets; i += 2 {
		covered[i%p.clonesets] = true
	}
	return len(covered) * p.replicas
}

// waitCloneSets waits until every CloneSet's controller has seen its latest generation and
// done says yes of its status, reading them all at once every second.
func (p platform) waitCloneSets(ctx context.Context, done func(appsv1alpha1.CloneSetStatus) bool) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 60*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list appsv1alpha1.CloneSetList
		if err := env.Client.List(ctx, &list, client.InNamespace(p.ns)); err != nil {
			return false, nil
		}
		behind := 0
		for i := range list.Items {
			if cs := &list.Items[i]; cs.Status.ObservedGeneration != cs.Generation || !done(cs.Status) {
				behind++
				last = fmt.Sprintf("%d of %d CloneSets behind, e.g. %s: %+v", behind, len(list.Items), cs.Name, cs.Status)
			}
		}
		return behind == 0 && len(list.Items) == p.clonesets, nil
	})
	if err != nil {
		return fmt.Errorf("%w; %s", err, last)
	}
	return nil
}

// waitSidecarSets waits until every injecting SidecarSet has updated all the pods it matches
// and they are Ready.
func (p platform) waitSidecarSets(ctx context.Context) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 60*time.Minute, true, func(ctx context.Context) (bool, error) {
		behind := 0
		for i := 0; i < p.sidecarSets; i += 2 {
			s := &appsv1alpha1.SidecarSet{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: p.sidecarSetName(i)}, s); err != nil {
				return false, nil
			}
			st := s.Status
			if st.ObservedGeneration != s.Generation || int(st.MatchedPods) != p.replicas || st.UpdatedPods != st.MatchedPods || st.UpdatedReadyPods != st.MatchedPods {
				behind++
				last = fmt.Sprintf("%s: %+v", s.Name, st)
			}
		}
		return behind == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last behind %s", err, last)
	}
	return nil
}

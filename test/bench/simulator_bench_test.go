package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// podCount watches the pods of a namespace that carry a label selector and counts those that
// meet a condition, without listing them again on every event: counting anew on every event
// would cost the bench process, whose CPU is measured, time quadratic in the pods.
type podCount struct {
	// synced is closed once the watch has listed the pods that already exist.
	synced chan struct{}
	// done gets the watch's end: nil once want pods meet the condition.
	done chan error
}

// watchPods starts a podCount that ends once want pods of ns matching sel meet ok, or after
// timeout. Wait for synced before making the changes it should see.
func watchPods(ctx context.Context, cs kubernetes.Interface, ns, sel string, want int, timeout time.Duration, ok func(*corev1.Pod) bool) *podCount {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return cs.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	met, count := map[string]bool{}, 0
	counted := func(ev watch.Event) (bool, error) {
		if pod, isPod := ev.Object.(*corev1.Pod); isPod {
			now := ev.Type != watch.Deleted && ok(pod)
			if now != met[pod.Name] {
				if now {
					count++
				} else {
					count--
				}
			}
			met[pod.Name] = now
		}
		return count == want, nil
	}
	pc := &podCount{synced: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		_, err := watchtools.UntilWithSync(wctx, lw, &corev1.Pod{}, func(cache.Store) (bool, error) {
			close(pc.synced)
			return false, nil
		}, counted)
		pc.done <- err
	}()
	return pc
}

// waitSynced returns once the watch has listed the pods, or with its error if it ended first.
func (pc *podCount) waitSynced() error {
	select {
	case <-pc.synced:
		return nil
	case err := <-pc.done:
		return err
	}
}

// simulatorAloneTimeout bounds each wait of simulatorAlone.
const simulatorAloneTimeout = 10 * time.Minute

// simulatorAlone measures the node simulator of st with nothing else acting: n bare pods wait,
// marked Unschedulable, while every simulated node is cordoned; then the nodes are uncordoned
// and the simulator alone binds the pods and makes them Ready. It returns the pods made Ready
// per second from the uncordon to the last Ready, and deletes the pods. Run it before the
// manager starts, so that no webhook or controller takes part.
func simulatorAlone(ctx context.Context, st *stage, n int) (float64, error) {
	nodes := st.sim.NodeNames()
	if err := cordon(ctx, st.cs, nodes, true); err != nil {
		return 0, err
	}
	// A pod marked Unschedulable shows that the simulator's cache holds every node cordoned;
	// the pods created after it meet the same nodes.
	const sel = "app=simulator-alone"
	canary := builder.Pod("simulator-alone-canary", st.ns).Label("app", "simulator-alone").Obj()
	waiting := watchPods(ctx, st.cs, st.ns, sel, n+1, simulatorAloneTimeout, isUnschedulable)
	if err := waiting.waitSynced(); err != nil {
		return 0, fmt.Errorf("watch the pods: %w", err)
	}
	if _, err := st.cs.CoreV1().Pods(st.ns).Create(ctx, canary, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	canaryOut := watchPods(ctx, st.cs, st.ns, sel, 1, simulatorAloneTimeout, isUnschedulable)
	if err := <-canaryOut.done; err != nil {
		return 0, fmt.Errorf("wait for the canary pod to be marked Unschedulable on cordoned nodes: %w", err)
	}
	if _, err := createPods(ctx, st.cs, st.ns, "simulator-alone", n, false); err != nil {
		return 0, err
	}
	if err := <-waiting.done; err != nil {
		return 0, fmt.Errorf("wait for the pods to be marked Unschedulable: %w", err)
	}

	ready := watchPods(ctx, st.cs, st.ns, sel, n+1, simulatorAloneTimeout, podReady)
	if err := ready.waitSynced(); err != nil {
		return 0, fmt.Errorf("watch the pods: %w", err)
	}
	start := time.Now()
	if err := cordon(ctx, st.cs, nodes, false); err != nil {
		return 0, err
	}
	if err := <-ready.done; err != nil {
		return 0, fmt.Errorf("wait for the simulator to make the pods Ready: %w", err)
	}
	took := time.Since(start)
	if err := deletePods(ctx, st.cs, st.ns, sel); err != nil {
		return 0, err
	}
	return float64(n+1) / took.Seconds(), nil
}

// simulatorLine compares the node simulator's pace alone with a phase's.
func simulatorLine(alone float64, n int, phase time.Duration) string {
	rate := float64(n) / phase.Seconds()
	return fmt.Sprintf("node simulator alone: %.0f pods/s bound and made Ready (the phase ran at %.0f pods/s, ratio %.1f)", alone, rate, alone/rate)
}

// cordon sets spec.unschedulable of the nodes.
func cordon(ctx context.Context, cs kubernetes.Interface, nodes []string, unschedulable bool) error {
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, unschedulable)
	for _, name := range nodes {
		if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("set node %s unschedulable=%t: %w", name, unschedulable, err)
		}
	}
	return nil
}

func isUnschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

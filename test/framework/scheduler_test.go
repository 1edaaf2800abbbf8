package framework_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func TestSchedulerBindsPodsOnlyWhereTheyFit(t *testing.T) {
	ns := newNamespace(t)
	plain, ssd := nodeName(ns, "plain"), nodeName(ns, "ssd")
	tainted, down, cordoned := nodeName(ns, "tainted"), nodeName(ns, "down"), nodeName(ns, "cordoned")
	startSimulator(t, ns, framework.WithNodes(
		builder.Node(plain).Zone("zone-a").Obj(),
		builder.Node(ssd).Zone("zone-b").Label("disk", "ssd").Obj(),
		builder.Node(tainted).Zone("zone-c").Taint("dedicated", "infra", corev1.TaintEffectNoSchedule).Obj(),
		builder.Node(down).Zone("zone-d").NotReady().Obj(),
		builder.Node(cordoned).Zone("zone-e").Unschedulable().Obj(),
	))
	inZone := func(name, zone string) *builder.PodBuilder {
		return builder.Pod(name, ns).RequireNodeLabelIn(corev1.LabelTopologyZone, zone)
	}
	cases := map[string]struct {
		pod      *corev1.Pod
		wantNode string // "" means it must stay unbound and be marked Unschedulable
	}{
		"a nodeSelector picks the labelled node": {
			pod: builder.Pod("selector", ns).NodeSelector(map[string]string{"disk": "ssd"}).Obj(), wantNode: ssd,
		},
		"required node affinity picks the node in the zone": {
			pod: inZone("affinity", "zone-a").Obj(), wantNode: plain,
		},
		"a toleration lets a pod onto the tainted node": {
			pod: inZone("tolerates", "zone-c").Tolerate("dedicated", "infra", corev1.TaintEffectNoSchedule).Obj(), wantNode: tainted,
		},
		"a pod is never bound to a tainted node it does not tolerate": {
			pod: inZone("intolerant", "zone-c").Obj(),
		},
		"a toleration of another value does not count": {
			pod: inZone("wrong-value", "zone-c").Tolerate("dedicated", "web", corev1.TaintEffectNoSchedule).Obj(),
		},
		"a node that is not Ready gets no pods": {
			pod: inZone("to-down", "zone-d").Obj(),
		},
		"a cordoned node gets no pods": {
			pod: inZone("to-cordoned", "zone-e").Obj(),
		},
		"a nodeSelector no node matches leaves the pod pending": {
			pod: builder.Pod("nowhere", ns).NodeSelector(map[string]string{"disk": "tape"}).Obj(),
		},
	}
	for _, tc := range cases {
		createPod(t, tc.pod)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.wantNode != "" {
				pod := waitForPod(t, ns, tc.pod.Name, scheduleTimeout, "bound", func(p *corev1.Pod) error {
					if p.Spec.NodeName == "" {
						return fmt.Errorf("not bound")
					}
					return nil
				})
				if pod.Spec.NodeName != tc.wantNode {
					t.Errorf("bound to %s, want %s", pod.Spec.NodeName, tc.wantNode)
				}
				return
			}
			// The scheduler writes Unschedulable after it has looked at every node; from then on
			// the pod must still be unbound.
			pod := waitForPod(t, ns, tc.pod.Name, scheduleTimeout, "marked Unschedulable", func(p *corev1.Pod) error {
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
						return nil
					}
				}
				return fmt.Errorf("nodeName %q, conditions %v", p.Spec.NodeName, p.Status.Conditions)
			})
			if pod.Spec.NodeName != "" {
				t.Errorf("bound to %s, want it unbound", pod.Spec.NodeName)
			}
		})
	}
}

func TestSchedulerSpreadsPodsByFewestPods(t *testing.T) {
	ns := newNamespace(t)
	nodes := []string{nodeName(ns, "a"), nodeName(ns, "b"), nodeName(ns, "c")}
	tainted := nodeName(ns, "tainted")
	startSimulator(t, ns, framework.WithNodes(
		builder.Node(nodes[0]).Zone("zone-a").Obj(),
		builder.Node(nodes[1]).Zone("zone-b").Obj(),
		builder.Node(nodes[2]).Zone("zone-c").Obj(),
		builder.Node(tainted).Zone("zone-a").Taint("dedicated", "infra", corev1.TaintEffectNoExecute).Obj(),
	))
	const pods = 9
	for i := range pods {
		createPod(t, builder.Pod(fmt.Sprintf("web-%d", i), ns).Label("app", "web").Obj())
	}
	counts := map[string]int{}
	framework.Eventually(t, scheduleTimeout, "every pod bound", func(ctx context.Context) error {
		list, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		counts = map[string]int{}
		for _, p := range list.Items {
			if p.Spec.NodeName == "" {
				return fmt.Errorf("%s not bound", p.Name)
			}
			counts[p.Spec.NodeName]++
		}
		return nil
	})
	want := map[string]int{nodes[0]: 3, nodes[1]: 3, nodes[2]: 3}
	if d := cmp.Diff(want, counts); d != "" {
		t.Errorf("pods per node (-want +got):\n%s", d)
	}
}

func TestSchedulerLeavesPodsOfOtherSchedulersAlone(t *testing.T) {
	ns := newNamespace(t)
	startSimulator(t, ns, framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))
	other := createPod(t, builder.Pod("other", ns).SchedulerName("my-scheduler").Obj())
	// A pod created after it is bound only once the scheduler has handled the earlier events.
	createPod(t, builder.Pod("marker", ns).Obj())
	waitForPod(t, ns, "marker", scheduleTimeout, "bound", func(p *corev1.Pod) error {
		if p.Spec.NodeName == "" {
			return fmt.Errorf("not bound")
		}
		return nil
	})
	got, err := getPod(context.Background(), ns, other.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "" || got.ResourceVersion != other.ResourceVersion {
		t.Errorf("pod of another scheduler was touched: nodeName %q, resourceVersion %s -> %s", got.Spec.NodeName, other.ResourceVersion, got.ResourceVersion)
	}
}

func TestSchedulerBindsOtherPodsWhileOneBindingIsSlow(t *testing.T) {
	ns := newNamespace(t)
	// The apiserver takes the binding of pod "slow" only once the test lets it through.
	held, release := make(chan struct{}), make(chan struct{})
	var holding sync.Once
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/pods/slow/binding") {
				holding.Do(func() { close(held) })
				select {
				case <-release:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return rt.RoundTrip(req)
		})
	})
	startSimulatorOn(t, &framework.Env{Config: cfg}, ns, framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))
	t.Cleanup(func() { close(release) }) // before the simulator stops: cleanups run last first

	createPod(t, builder.Pod("slow", ns).Obj())
	framework.Eventually(t, scheduleTimeout, "the binding of pod slow is sent", func(context.Context) error {
		select {
		case <-held:
			return nil
		default:
			return fmt.Errorf("not yet")
		}
	})
	createPod(t, builder.Pod("fast", ns).Obj())
	waitForPod(t, ns, "fast", scheduleTimeout, "bound while the binding of pod slow is held", func(p *corev1.Pod) error {
		if p.Spec.NodeName == "" {
			return fmt.Errorf("not bound")
		}
		return nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

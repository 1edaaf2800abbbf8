package podrefresh

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// notReady is a pod whose InPlaceUpdateReady is False with no update under way: its refresh
// writes the condition True.
func notReady(name string) *corev1.Pod {
	p := builder.Pod(name, "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).
		Condition(appspub.InPlaceUpdateReady, corev1.ConditionFalse).Obj()
	p.UID = types.UID(name)
	return p
}

// inGrace is a pod whose in-place update waits out a grace period of seconds that started now.
func inGrace(t *testing.T, name string, seconds int32) *corev1.Pod {
	t.Helper()
	state, err := json.Marshal(appspub.InPlaceUpdateState{Revision: "v2", UpdateTimestamp: metav1.NewTime(now)})
	if err != nil {
		t.Fatal(err)
	}
	grace, err := json.Marshal(map[string]any{"revision": "v2", "containerImages": map[string]string{"main": "web:2"}, "graceSeconds": seconds})
	if err != nil {
		t.Fatal(err)
	}
	p := builder.Pod(name, "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).
		Annotation(appspub.InPlaceUpdateStateKey, string(state)).Annotation(appspub.InPlaceUpdateGraceKey, string(grace)).Obj()
	p.UID = types.UID(name)
	return p
}

func refresher(c client.Client) Refresher {
	clk := clocktesting.NewFakePassiveClock(now)
	return Refresher{
		Updater: &inplaceupdate.Updater{Client: c, Clock: clk},
		Mover:   lifecycle.Mover{Client: c, Clock: clk},
		Expect:  func(*corev1.Pod) {},
	}
}

func TestPodsReportsUpdatingPodsTheSoonestRequeueAndEveryFailureByName(t *testing.T) {
	stored := []*corev1.Pod{notReady("done"), inGrace(t, "slow", 30), inGrace(t, "fast", 10)}
	var objs []client.Object
	for _, p := range stored {
		objs = append(objs, p)
	}
	c := testclient.New(objs...)
	// "gone-1" and "gone-2" are not in the apiserver: their writes fail, and the others still go.
	pods := append([]*corev1.Pod{notReady("gone-1")}, stored...)
	pods = append(pods, notReady("gone-2"))

	res, err := refresher(c).Pods(context.Background(), nil, pods, func(*corev1.Pod) bool { return true }, nil)
	if err == nil || !strings.Contains(err.Error(), "pod gone-1") || !strings.Contains(err.Error(), "pod gone-2") {
		t.Errorf("error = %v, want one naming gone-1 and gone-2", err)
	}
	testkit.Diff(t, "updating", map[types.UID]bool{"slow": true, "fast": true}, res.Updating)
	if res.RequeueAfter != 10*time.Second {
		t.Errorf("requeue after %v, want 10s (the shorter grace period)", res.RequeueAfter)
	}
	got := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "done"}, got); err != nil {
		t.Fatal(err)
	}
	if cond := inplaceupdate.Condition(got); cond == nil || cond.Status != corev1.ConditionTrue {
		t.Errorf("pod done: InPlaceUpdateReady = %+v, want True", cond)
	}
}

func TestPodsWritesConcurrentlyAndSkipsWhatSkipSays(t *testing.T) {
	const n = 4
	var pods []*corev1.Pod
	var objs []client.Object
	for _, name := range []string{"a", "b", "c", "d", "skipped"} {
		p := notReady(name)
		pods = append(pods, p)
		objs = append(objs, p.DeepCopy())
	}
	base := testclient.New(objs...)
	// Each write waits until all n are in flight: written one after another, the first would
	// wait for the others forever, and gives up after a minute.
	var mu sync.Mutex
	inFlight, wrote := 0, map[string]bool{}
	all := make(chan struct{})
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			mu.Lock()
			inFlight++
			wrote[obj.GetName()] = true
			if inFlight == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(time.Minute):
				t.Errorf("write of %s: the other writes never came while it was in flight", obj.GetName())
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	skip := func(p *corev1.Pod) bool { return p.Name == "skipped" }
	if _, err := refresher(c).Pods(context.Background(), nil, pods, func(*corev1.Pod) bool { return true }, skip); err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "pods written", map[string]bool{"a": true, "b": true, "c": true, "d": true}, wrote)
}

func TestPodsReplacesAMovedPodWithThePodAsWritten(t *testing.T) {
	// A pod in Updating that is at the update revision moves to Updated.
	p := builder.Pod("moved", "ns").Container("main", "web:1").Label(appspub.LifecycleStateKey, string(appspub.LifecycleStateUpdating)).Obj()
	p.UID = "moved"
	c := testclient.New(p.DeepCopy())
	var expected []string
	r := refresher(c)
	r.Expect = func(p *corev1.Pod) { expected = append(expected, p.Name) }
	pods := []*corev1.Pod{p}
	if _, err := r.Pods(context.Background(), nil, pods, func(*corev1.Pod) bool { return true }, nil); err != nil {
		t.Fatal(err)
	}
	if got := pods[0].Labels[appspub.LifecycleStateKey]; got != string(appspub.LifecycleStateUpdated) {
		t.Errorf("pods[0] lifecycle state = %q, want Updated (the pod as written)", got)
	}
	if pods[0] == p {
		t.Errorf("pods[0] is still the pod passed in")
	}
	testkit.Diff(t, "expected pods", []string{"moved"}, expected)
}

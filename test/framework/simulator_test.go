package framework_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// simulatorGoroutines counts goroutines running the simulator's code or the informer and
// workqueue machinery it starts. The package's tests run one at a time, so outside a test
// with a simulator this is zero.
func simulatorGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "test/framework.(*NodeSimulator)") ||
			strings.Contains(g, "k8s.io/client-go/tools/cache.") ||
			strings.Contains(g, "k8s.io/client-go/util/workqueue.") {
			n++
		}
	}
	return n
}

func TestStopStopsEveryGoroutineTheSimulatorStarted(t *testing.T) {
	ns := newNamespace(t)
	if n := simulatorGoroutines(); n != 0 {
		t.Fatalf("%d simulator goroutines before the test; is another simulator running?", n)
	}
	sim, err := framework.StartNodeSimulator(context.Background(), env, framework.WithSchedulerNamespaces(ns),
		framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))
	if err != nil {
		t.Fatal(err)
	}
	createPod(t, builder.Pod("p", ns).Obj())
	waitForPod(t, ns, "p", statusTimeout, "Ready", isReady)
	if n := simulatorGoroutines(); n == 0 {
		t.Fatal("no simulator goroutines while it runs: the count cannot see them")
	}
	if err := sim.DeleteNodes(context.Background()); err != nil {
		t.Fatal(err)
	}
	sim.Stop()
	framework.Eventually(t, goroutineTimeout, "simulator goroutines end", func(context.Context) error {
		if n := simulatorGoroutines(); n != 0 {
			return fmt.Errorf("%d still running", n)
		}
		return nil
	})
}

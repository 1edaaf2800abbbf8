package workloadspread

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// orderRounds is how many times each order is played, each round in a namespace of its own
// and all rounds of one order at once.
const orderRounds = 10

// TestWorkloadSpreadAppliedWithItsDeploymentSpreadsByPercentageInAnyOrder applies a
// WorkloadSpread of 20%, 30% and the rest with its Deployment of 6, as `kubectl apply -f dir/`
// does, in every order in which the two can reach the manager. Whatever the WorkloadSpread's
// status said when the Deployment's pods were admitted, the spread is 2/2/2: the percentages
// are resolved against the Deployment as it is at admission. Pods admitted before their
// WorkloadSpread exists are not spread by it: they predate it and join the subset of their node
// (TestPodsThatPredateTheSpreadJoinTheSubsetOfTheirNode), so no order here gives the
// Deployment its pods before the WorkloadSpread exists.
func TestWorkloadSpreadAppliedWithItsDeploymentSpreadsByPercentageInAnyOrder(t *testing.T) {
	spreadOf := func(ns string) *appsv1alpha1.WorkloadSpread { return percentSpread(ns, "apps/v1", "Deployment", "api") }
	orders := map[string]func(t *testing.T, ns string){
		"the WorkloadSpread's status is written before the Deployment exists": func(t *testing.T, ns string) {
			framework.Create(t, env.Client, spreadOf(ns))
			observed(t, ns, "api")
			framework.Create(t, env.Client, deployment("api", ns, 6))
		},
		"the WorkloadSpread is created just before the Deployment": func(t *testing.T, ns string) {
			framework.Create(t, env.Client, spreadOf(ns))
			framework.Create(t, env.Client, deployment("api", ns, 6))
		},
		"the WorkloadSpread and the Deployment are created at once": func(t *testing.T, ns string) {
			// The Deployment is created paused and resumed once both exist: created running, its
			// first pod may be admitted before the WorkloadSpread is (the WorkloadSpread's create
			// waits for its validating webhook, the Deployment's does not), and such a pod
			// predates it. The controller's first pass still races the Deployment's arrival.
			dep := deployment("api", ns, 6)
			dep.Spec.Paused = true
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for _, obj := range []client.Object{spreadOf(ns), dep} {
				wg.Go(func() {
					if err := env.Client.Create(context.Background(), obj); err != nil {
						errs <- fmt.Errorf("create %T: %w", obj, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			must(t, env.Client.Patch(context.Background(), deployment("api", ns, 6), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`))))
		},
		"the Deployment is scaled from 0 after the WorkloadSpread resolved its percentages against 0": func(t *testing.T, ns string) {
			framework.Create(t, env.Client, deployment("api", ns, 0))
			framework.Create(t, env.Client, spreadOf(ns))
			statusesAre(t, ns, "api", "a 0/0 0+0, b 0/0 0+0, c 0/-1 0+0")
			dep := deployment("api", ns, 0)
			must(t, env.Client.Patch(context.Background(), dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":6}}`))))
		},
	}
	for order, apply := range orders {
		t.Run(order, func(t *testing.T) {
			for round := range orderRounds {
				t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
					t.Parallel()
					ns := framework.NewNamespace(t, env.Client, "ws-order-", nil)
					apply(t, ns)
					spreadIs(t, ns, "api", map[string]int{"a": 2, "b": 2, "c": 2})
					statusesAre(t, ns, "api", "a 2/0 0+0, b 2/0 0+0, c 2/-1 0+0")
				})
			}
		})
	}
}

// TestPodsCreatedWithTheirJobSpreadByPercentage creates a Job and its six pods at once after
// the WorkloadSpread's status was written without the Job, so the pods are admitted before the
// controller has seen the Job (no Job controller runs in this suite: the test creates the
// pods, as fast as a workload controller would).
func TestPodsCreatedWithTheirJobSpreadByPercentage(t *testing.T) {
	for round := range orderRounds {
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := framework.NewNamespace(t, env.Client, "ws-order-", nil)
			framework.Create(t, env.Client, percentSpread(ns, "batch/v1", "Job", "batch"))
			observed(t, ns, "batch")
			job := ownerJob("batch", ns, 6)
			framework.Create(t, env.Client, job)
			var wg sync.WaitGroup
			errs := make(chan error, 6)
			for range 6 {
				wg.Go(func() {
					if err := env.Client.Create(ctx, jobPod(job, "batch-")); err != nil {
						errs <- fmt.Errorf("create a pod of the Job: %w", err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			spreadIs(t, ns, "batch", map[string]int{"a": 2, "b": 2, "c": 2})
			statusesAre(t, ns, "batch", "a 2/0 0+0, b 2/0 0+0, c 2/-1 0+0")
		})
	}
}

func TestPercentageSubsetsOfATargetNotYetSeenAreNotWrittenAsZero(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	framework.Create(t, env.Client, percentSpread(ns, "apps/v1", "Deployment", "later"))
	observed(t, ns, "later")
	ws, err := getSpread(context.Background(), ns, "later")
	must(t, err)
	if got := subsetSummary(ws); got != "" {
		t.Errorf("subset statuses of a WorkloadSpread whose Deployment does not exist: %q, want none", got)
	}
	// The Deployment's arrival alone sizes them.
	framework.Create(t, env.Client, deployment("later", ns, 0))
	statusesAre(t, ns, "later", "a 0/0 0+0, b 0/0 0+0, c 0/-1 0+0")
}

// observed waits until the controller has written the status of the WorkloadSpread's
// generation.
func observed(t *testing.T, ns, name string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, "the status of the WorkloadSpread's generation", func(ctx context.Context) error {
		ws, err := getSpread(ctx, ns, name)
		if err != nil {
			return err
		}
		return framework.Want(ws.Status.ObservedGeneration == ws.Generation,
			fmt.Sprintf("observedGeneration %d of generation %d", ws.Status.ObservedGeneration, ws.Generation))
	})
}

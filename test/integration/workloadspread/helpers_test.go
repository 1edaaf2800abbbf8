package workloadspread

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// zoneOfNode is the zone setUp gave each node.
func zoneOfNode(node string) string {
	var i int
	if _, err := fmt.Sscanf(node, "node-%d", &i); err != nil {
		return ""
	}
	return zones[i%3]
}

// livePods lists the pods of ns labelled app=<app> that are not being deleted.
func livePods(ctx context.Context, ns, app string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// bySubset counts pods by the subset their annotation names; "<none>" for none.
func bySubset(pods []corev1.Pod) map[string]int {
	out := map[string]int{}
	for i := range pods {
		in, ok, _ := spread.InjectedOf(&pods[i])
		if !ok {
			out["<none>"]++
			continue
		}
		out[in.Subset]++
	}
	return out
}

// percentSpread is a WorkloadSpread named after its target that puts 20% of the target's
// replicas in zone-a (subset a), 30% in zone-b (b) and the rest in zone-c (c): of 6, 2 each.
func percentSpread(ns, apiVersion, kind, name string) *appsv1alpha1.WorkloadSpread {
	return kinds.WorkloadSpread(name, ns).Target(apiVersion, kind, name).
		ZoneSubset("a", "zone-a", "20%").ZoneSubset("b", "zone-b", "30%").ZoneSubset("c", "zone-c", "").Obj()
}

// spreadIs waits until as many pods of app as want counts are Ready on nodes of their subsets'
// zones, then fails t unless each subset has the pods want gives it. It returns the pods.
func spreadIs(t *testing.T, ns, app string, want map[string]int) []corev1.Pod {
	t.Helper()
	n := 0
	for _, c := range want {
		n += c
	}
	var pods []corev1.Pod
	framework.Eventually(t, framework.Medium, fmt.Sprintf("%d pods Ready in their subsets' zones", n), func(ctx context.Context) error {
		var err error
		pods, err = placedPods(ctx, ns, app, n)
		return err
	})
	if diff := cmp.Diff(want, bySubset(pods)); diff != "" {
		t.Errorf("pods per subset (-want +got):\n%s", diff)
	}
	return pods
}

// placedPods returns the live pods of app when they are n, all Ready on a node of their
// subset's zone; otherwise an error saying why not.
func placedPods(ctx context.Context, ns, app string, n int) ([]corev1.Pod, error) {
	pods, err := livePods(ctx, ns, app)
	if err != nil {
		return nil, err
	}
	return pods, readyAndPlaced(pods, n)
}

// readyAndPlaced says why the pods are not yet all Ready on a node of their subset's zone
// (subset "a" lives in zone-a and so on), or nil.
func readyAndPlaced(pods []corev1.Pod, want int) error {
	if len(pods) != want {
		return fmt.Errorf("%d pods, want %d", len(pods), want)
	}
	for i := range pods {
		p := &pods[i]
		in, ok, _ := spread.InjectedOf(p)
		if !ok {
			return fmt.Errorf("pod %s has no subset", p.Name)
		}
		if p.Spec.NodeName == "" || !podReady(p) {
			return fmt.Errorf("pod %s not yet Ready on a node", p.Name)
		}
		if got := zoneOfNode(p.Spec.NodeName); got != "zone-"+in.Subset {
			return fmt.Errorf("pod %s of subset %s runs in %s", p.Name, in.Subset, got)
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// subsetSummary renders each subset status as "name replicas/missing creating+deleting".
func subsetSummary(ws *appsv1alpha1.WorkloadSpread) string {
	var parts []string
	for _, s := range ws.Status.SubsetStatuses {
		parts = append(parts, fmt.Sprintf("%s %d/%d %d+%d", s.Name, s.Replicas, s.MissingReplicas, len(s.CreatingPods), len(s.DeletingPods)))
	}
	return strings.Join(parts, ", ")
}

func getSpread(ctx context.Context, ns, name string) (*appsv1alpha1.WorkloadSpread, error) {
	ws := &appsv1alpha1.WorkloadSpread{}
	return ws, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ws)
}

// deployment is a Deployment of replicas selecting app=<name>.
func deployment(name, ns string, replicas int32) *appsv1.Deployment {
	return builder.Deployment(name, ns).Replicas(replicas).Obj()
}

// ownerJob is a suspended Job of parallelism; no Job controller runs in this suite, so it is
// only the owner the tests' own pods point at.
func ownerJob(name, ns string, parallelism int32) *batchv1.Job {
	return builder.Job(name, ns).Parallelism(parallelism).Obj()
}

// spreadJob creates a namespace, the owner Job name of that parallelism in it, and the
// WorkloadSpread name targeting the Job with the subsets subsets adds, and returns the namespace
// and the Job.
func spreadJob(t *testing.T, name string, parallelism int32, subsets func(*kinds.WorkloadSpreadBuilder) *kinds.WorkloadSpreadBuilder) (string, *batchv1.Job) {
	t.Helper()
	ns := framework.NewNamespace(t, env.Client, "ws-", nil)
	job := ownerJob(name, ns, parallelism)
	framework.Create(t, env.Client, job)
	framework.Create(t, env.Client, subsets(kinds.WorkloadSpread(name, ns).Target("batch/v1", "Job", name)).Obj())
	return ns, job
}

// jobPod is a pod controlled by job, named name or, when name ends in "-", generated from it.
func jobPod(job *batchv1.Job, name string) *corev1.Pod {
	b := builder.Pod(name, job.Namespace)
	if strings.HasSuffix(name, "-") {
		b = b.GenerateName(name)
	}
	return b.Label("app", job.Name).OwnedBy(builder.ControllerRef("batch/v1", "Job", job)).Obj()
}

// statusesAre waits until the subset statuses of the WorkloadSpread read want, as subsetSummary
// renders them.
func statusesAre(t *testing.T, ns, name, want string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, "subset statuses "+want, func(ctx context.Context) error {
		ws, err := getSpread(ctx, ns, name)
		if err != nil {
			return err
		}
		got := subsetSummary(ws)
		return framework.Want(got == want, "subset statuses: "+got)
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func intstrOf(v int32) intstr.IntOrString { return intstr.FromInt32(v) }

// deletionCost is the annotation the controller writes and scale-downs read.
const deletionCost = "controller.kubernetes.io/pod-deletion-cost"

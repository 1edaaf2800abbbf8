package broadcastjob

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "bcj-", nil)
}

// createJob creates job and, when the test ends, deletes it and its pods: no garbage collector
// runs in the test bed.
func createJob(t *testing.T, job *appsv1alpha1.BroadcastJob) {
	t.Helper()
	framework.Create(t, env.Client, job)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.Delete(ctx, job)
		_ = env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(job.Namespace))
	})
}

// getJob reads the job.
func getJob(ctx context.Context, ns, name string) (*appsv1alpha1.BroadcastJob, error) {
	job := &appsv1alpha1.BroadcastJob{}
	return job, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
}

// jobAndPods reads the job called name and lists its pods.
func jobAndPods(ctx context.Context, ns, name string) (*appsv1alpha1.BroadcastJob, []corev1.Pod, error) {
	job, err := getJob(ctx, ns, name)
	if err != nil {
		return nil, nil, err
	}
	pods, err := jobPods(ctx, ns, name)
	return job, pods, err
}

// jobPods lists the pods of the job called name, by the label the controller puts on them.
func jobPods(ctx context.Context, ns, name string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{appsv1alpha1.BroadcastJobNameLabel: name})
	return list.Items, err
}

// boundNodes are the nodes the pods are bound to, sorted; unbound pods count as "".
func boundNodes(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Spec.NodeName)
	}
	sort.Strings(out)
	return out
}

// waitForPhase waits until the job shows phase and, when cond is not "", a true condition of
// that type.
func waitForPhase(t *testing.T, ns, name string, phase appsv1alpha1.BroadcastJobPhase, cond appsv1alpha1.JobConditionType) *appsv1alpha1.BroadcastJob {
	t.Helper()
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, framework.Medium, fmt.Sprintf("job %s is %s", name, phase), func(job *appsv1alpha1.BroadcastJob) error {
		if job.Status.Phase != phase {
			return fmt.Errorf("phase %q, status %+v", job.Status.Phase, job.Status)
		}
		if cond != "" && trueCondition(job) != cond {
			return fmt.Errorf("conditions %+v, want %s", job.Status.Conditions, cond)
		}
		return nil
	})
}

// trueCondition is the type of the job's true condition, or "".
func trueCondition(job *appsv1alpha1.BroadcastJob) appsv1alpha1.JobConditionType {
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// changeJob gets the job, applies f and updates it, retrying on conflicts.
func changeJob(t *testing.T, ns, name string, f func(*appsv1alpha1.BroadcastJob)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, f)
}

// changePod gets the pod, applies f and updates it, retrying on conflicts.
func changePod(t *testing.T, ns, name string, f func(*corev1.Pod)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, f)
}

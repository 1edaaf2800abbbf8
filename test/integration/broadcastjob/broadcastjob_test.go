package broadcastjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// hold is how long a test watches that something does not happen.
const hold = 3 * time.Second

// plainNodeNames are the suite's untainted nodes, sorted.
func plainNodeNames() []string {
	var out []string
	for i := range plainNodes {
		out = append(out, fmt.Sprintf("node-%d", i))
	}
	return out
}

// TestOnePodPerEligibleNodeAndComplete: a job with policy Always runs one pod on each node its
// template fits, skips the node whose taint it does not tolerate, pins each pod by node
// affinity (not nodeName), and completes once every pod succeeded.
func TestOnePodPerEligibleNodeAndComplete(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("all", ns).PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj())

	job := waitForPhase(t, ns, "all", appsv1alpha1.PhaseCompleted, appsv1alpha1.JobComplete)
	if job.Status.Desired != plainNodes || job.Status.Succeeded != plainNodes || job.Status.Active != 0 || job.Status.Failed != 0 {
		t.Errorf("status desired/succeeded/active/failed = %d/%d/%d/%d, want %d/%d/0/0", job.Status.Desired, job.Status.Succeeded, job.Status.Active, job.Status.Failed, plainNodes, plainNodes)
	}
	if job.Status.StartTime == nil || job.Status.CompletionTime == nil {
		t.Errorf("startTime %v, completionTime %v: want both set", job.Status.StartTime, job.Status.CompletionTime)
	}
	pods, err := jobPods(context.Background(), ns, "all")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plainNodeNames(), boundNodes(pods)); diff != "" {
		t.Errorf("nodes of the pods (-want +got):\n%s", diff)
	}
	for _, p := range pods {
		a := p.Spec.Affinity
		if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
			a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] != p.Spec.NodeName {
			t.Errorf("pod %s on %s has no required node affinity to its node: %+v", p.Name, p.Spec.NodeName, a)
		}
	}
}

// TestTolerationReachesTheTaintedNode: a template that tolerates the taint gets a pod there too.
func TestTolerationReachesTheTaintedNode(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("gpu", ns).Tolerate(taintKey, taintValue, corev1.TaintEffectNoSchedule).
		PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj())
	job := waitForPhase(t, ns, "gpu", appsv1alpha1.PhaseCompleted, appsv1alpha1.JobComplete)
	if job.Status.Desired != allNodeCount {
		t.Errorf("desired %d, want %d", job.Status.Desired, allNodeCount)
	}
	pods, err := jobPods(context.Background(), ns, "gpu")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(plainNodeNames(), taintedNode), boundNodes(pods)); diff != "" {
		t.Errorf("nodes of the pods (-want +got):\n%s", diff)
	}
}

// TestNodeTooSmallForTheRequestsIsNotDesired: of two nodes the template selects, the one whose
// allocatable cpu is below the pod's request is not desired and gets no pod; the job completes
// on the other. The nodes carry their own taint, so that no other test's job counts them.
func TestNodeTooSmallForTheRequestsIsNotDesired(t *testing.T) {
	const key, big, small = "bcj-fit", "bcj-fit-big", "bcj-fit-small"
	for _, n := range []*corev1.Node{
		builder.Node(big).Label(key, "true").Taint(key, "true", corev1.TaintEffectNoSchedule).Obj(),
		builder.Node(small).Capacity("1", "4Gi", 110).Label(key, "true").Taint(key, "true", corev1.TaintEffectNoSchedule).Obj(),
	} {
		if err := sim.AddNodes(context.Background(), n); err != nil {
			t.Fatalf("add node: %v", err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: n.ObjectMeta}) })
	}
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("fit", ns).NodeSelector(map[string]string{key: "true"}).Tolerate(key, "true", corev1.TaintEffectNoSchedule).
		Requests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}).
		PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj())

	job := waitForPhase(t, ns, "fit", appsv1alpha1.PhaseCompleted, appsv1alpha1.JobComplete)
	if job.Status.Desired != 1 || job.Status.Succeeded != 1 || job.Status.Failed != 0 {
		t.Errorf("status desired/succeeded/failed = %d/%d/%d, want 1/1/0", job.Status.Desired, job.Status.Succeeded, job.Status.Failed)
	}
	pods, err := jobPods(context.Background(), ns, "fit")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{big}, boundNodes(pods)); diff != "" {
		t.Errorf("nodes of the pods (-want +got):\n%s", diff)
	}
}

// TestParallelismCapsRunningPods: with parallelism 2 and pods that keep running, only two pods
// exist; when one finishes, the third node gets its pod.
func TestParallelismCapsRunningPods(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("two", ns).Parallelism(intstr.FromInt32(2)).Obj())

	framework.Eventually(t, framework.Medium, "two pods run", func(ctx context.Context) error {
		job, err := getJob(ctx, ns, "two")
		if err != nil {
			return err
		}
		return framework.Want(job.Status.Active == 2 && job.Status.Desired == plainNodes, fmt.Sprintf("status %+v", job.Status))
	})
	var pods []corev1.Pod
	framework.Consistently(t, hold, "no more than two pods", func(ctx context.Context) error {
		var err error
		if pods, err = jobPods(ctx, ns, "two"); err != nil {
			return err
		}
		return framework.Want(len(pods) == 2, fmt.Sprintf("%d pods", len(pods)))
	})
	changePod(t, ns, pods[0].Name, func(p *corev1.Pod) {
		p.Annotations = map[string]string{framework.AnnotationPhase: string(corev1.PodSucceeded)}
	})
	framework.Eventually(t, framework.Medium, "the third node gets its pod once one pod finished", func(ctx context.Context) error {
		job, pods, err := jobAndPods(ctx, ns, "two")
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == 3 && job.Status.Succeeded == 1 && job.Status.Active == 2, fmt.Sprintf("%d pods, status %+v", len(pods), job.Status))
	})
}

// TestCompletionPolicyNeverKeepsRunning: with policy Never the job stays running after every
// pod succeeded, and a node added later gets its pod.
func TestCompletionPolicyNeverKeepsRunning(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("forever", ns).Never().PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj())

	framework.Eventually(t, framework.Medium, "every pod succeeded", func(ctx context.Context) error {
		job, err := getJob(ctx, ns, "forever")
		if err != nil {
			return err
		}
		return framework.Want(job.Status.Succeeded == plainNodes, fmt.Sprintf("status %+v", job.Status))
	})
	framework.Consistently(t, hold, "the job stays running", func(ctx context.Context) error {
		job, err := getJob(ctx, ns, "forever")
		if err != nil {
			return err
		}
		return framework.Want(job.Status.Phase == appsv1alpha1.PhaseRunning && trueCondition(job) == "" && job.Status.CompletionTime == nil,
			fmt.Sprintf("status %+v", job.Status))
	})

	late := builder.Node("node-late").Obj()
	if err := sim.AddNodes(context.Background(), late); err != nil {
		t.Fatalf("add node: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: late.ObjectMeta}) })
	framework.Eventually(t, framework.Medium, "the late node gets a pod that succeeds", func(ctx context.Context) error {
		pods, err := jobPods(ctx, ns, "forever")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.NodeName == "node-late" && p.Status.Phase == corev1.PodSucceeded {
				return nil
			}
		}
		return fmt.Errorf("pods on %v", boundNodes(pods))
	})
}

// TestActiveDeadlineFailsTheJob: pods that outlive activeDeadlineSeconds fail the job, which
// deletes them.
func TestActiveDeadlineFailsTheJob(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("late", ns).ActiveDeadline(2).Obj())

	job := waitForPhase(t, ns, "late", appsv1alpha1.PhaseFailed, appsv1alpha1.JobFailed)
	if c := job.Status.Conditions[0]; c.Reason != "DeadlineExceeded" {
		t.Errorf("condition reason %q, want DeadlineExceeded", c.Reason)
	}
	framework.Eventually(t, framework.Medium, "the running pods are deleted", func(ctx context.Context) error {
		pods, err := jobPods(ctx, ns, "late")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				return fmt.Errorf("pod %s is not being deleted", p.Name)
			}
		}
		return nil
	})
}

// TestTTLDeletesTheFinishedJob: ttlSecondsAfterFinished deletes the job once it completed.
func TestTTLDeletesTheFinishedJob(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("short", ns).TTL(1).PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj())
	framework.WaitGone(t, env.Client, client.ObjectKey{Namespace: ns, Name: "short"}, &appsv1alpha1.BroadcastJob{}, framework.Medium, "the finished job is deleted")
}

// TestFailFastFailsTheJob: under FailFast one failed pod fails the job.
func TestFailFastFailsTheJob(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("crash", ns).FailurePolicy(appsv1alpha1.FailurePolicyTypeFailFast, 0).
		PodAnnotation(framework.AnnotationPhase, string(corev1.PodFailed)).Obj())
	job := waitForPhase(t, ns, "crash", appsv1alpha1.PhaseFailed, appsv1alpha1.JobFailed)
	if job.Status.Failed == 0 {
		t.Errorf("status.failed is 0: %+v", job.Status)
	}
}

// TestFailurePolicyPausePausesTheJob: under Pause a failed pod pauses the job instead of
// failing it, and no pod is created afterwards.
func TestFailurePolicyPausePausesTheJob(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("pause", ns).Parallelism(intstr.FromInt32(1)).FailurePolicy(appsv1alpha1.FailurePolicyTypePause, 0).
		PodAnnotation(framework.AnnotationPhase, string(corev1.PodFailed)).Obj())
	waitForPhase(t, ns, "pause", appsv1alpha1.PhasePaused, "")
	framework.Consistently(t, hold, "the job stays paused with its one failed pod", func(ctx context.Context) error {
		job, pods, err := jobAndPods(ctx, ns, "pause")
		if err != nil {
			return err
		}
		return framework.Want(job.Status.Phase == appsv1alpha1.PhasePaused && trueCondition(job) == "" && len(pods) == 1,
			fmt.Sprintf("%d pods, status %+v", len(pods), job.Status))
	})
}

// TestRestartLimitFailsTheJob: an OnFailure pod whose containers restarted more than
// restartLimit times counts as failed, and under FailFast fails the job. The test writes the
// restart count as a kubelet would.
func TestRestartLimitFailsTheJob(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("flaky", ns).RestartPolicy(corev1.RestartPolicyOnFailure).
		FailurePolicy(appsv1alpha1.FailurePolicyTypeFailFast, 1).Obj())
	var pod corev1.Pod
	framework.Eventually(t, framework.Medium, "a pod runs", func(ctx context.Context) error {
		pods, err := jobPods(ctx, ns, "flaky")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("no running pod among %d", len(pods))
	})
	framework.Consistently(t, hold, "the job runs while no container restarted", func(ctx context.Context) error {
		job, err := getJob(ctx, ns, "flaky")
		if err != nil {
			return err
		}
		return framework.Want(job.Status.Phase == appsv1alpha1.PhaseRunning, fmt.Sprintf("status %+v", job.Status))
	})
	framework.Eventually(t, framework.Short, "write two restarts", func(ctx context.Context) error {
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&pod), p); err != nil {
			return err
		}
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].RestartCount = 2
		}
		return env.Client.Status().Update(ctx, p)
	})
	job := waitForPhase(t, ns, "flaky", appsv1alpha1.PhaseFailed, appsv1alpha1.JobFailed)
	if job.Status.Failed == 0 {
		t.Errorf("status.failed is 0: %+v", job.Status)
	}
}

// TestPausedJobCreatesNothingUntilResumed: a job created paused has no pods and phase paused;
// unpaused, it runs.
func TestPausedJobCreatesNothingUntilResumed(t *testing.T) {
	ns := newNamespace(t)
	createJob(t, kinds.BroadcastJob("held", ns).Paused(true).PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj())
	waitForPhase(t, ns, "held", appsv1alpha1.PhasePaused, "")
	framework.Consistently(t, hold, "a paused job has no pods", func(ctx context.Context) error {
		pods, err := jobPods(ctx, ns, "held")
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == 0, fmt.Sprintf("%d pods", len(pods)))
	})
	changeJob(t, ns, "held", func(j *appsv1alpha1.BroadcastJob) { j.Spec.Paused = false })
	waitForPhase(t, ns, "held", appsv1alpha1.PhaseCompleted, appsv1alpha1.JobComplete)
}

// TestWebhookDefaultsAndRefuses: the defaulting webhook sets the pod's restartPolicy, and the
// validating webhook refuses restartPolicy Always naming the field.
func TestWebhookDefaultsAndRefuses(t *testing.T) {
	ns := newNamespace(t)
	job := kinds.BroadcastJob("defaults", ns).Paused(true).RestartPolicy("").Obj()
	createJob(t, job)
	got, err := getJob(context.Background(), ns, "defaults")
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure || got.Spec.FailurePolicy.Type != appsv1alpha1.FailurePolicyTypeFailFast {
		t.Errorf("restartPolicy %q, failurePolicy %q: want OnFailure and FailFast", got.Spec.Template.Spec.RestartPolicy, got.Spec.FailurePolicy.Type)
	}

	bad := kinds.BroadcastJob("bad", ns).RestartPolicy(corev1.RestartPolicyAlways).Obj()
	err = env.Client.Create(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "spec.template.spec.restartPolicy") {
		t.Errorf("create with restartPolicy Always: %v, want a refusal naming spec.template.spec.restartPolicy", err)
	}
}

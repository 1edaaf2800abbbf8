package broadcastjob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// jobPod is the job's pod on node in phase, pinned there as the controller pins it.
func jobPod(node string, phase corev1.PodPhase) *corev1.Pod {
	p := builder.Pod("job-"+node, "ns").Phase(phase).RestartPolicy(corev1.RestartPolicyNever).Obj()
	nodepin.PinToNode(&p.Spec, node)
	p.Spec.NodeName = node
	return p
}

// restartedPod is a running OnFailure pod on node-0 whose container restarted restarts times.
func restartedPod(restarts int32) *corev1.Pod {
	p := jobPod("node-0", corev1.PodRunning)
	p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: restarts}}
	return p
}

func nodes(names ...string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range names {
		out = append(out, builder.Node(n).Obj())
	}
	return out
}

func running(start time.Time) appsv1alpha1.BroadcastJobStatus {
	return appsv1alpha1.BroadcastJobStatus{StartTime: &metav1.Time{Time: start}, Phase: appsv1alpha1.PhaseRunning}
}

func TestPlanPass(t *testing.T) {
	job := func() *kinds.BroadcastJobBuilder {
		return kinds.BroadcastJob("job", "ns").UID("uid-1").
			CompletionPolicy(appsv1alpha1.Always).FailurePolicy(appsv1alpha1.FailurePolicyTypeFailFast, 0)
	}
	tainted := builder.Node("node-t").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule).Obj()
	cordoned := builder.Node("node-c").Unschedulable().Obj()
	type tcase struct {
		job         *appsv1alpha1.BroadcastJob
		nodes       []*corev1.Node
		pods        []*corev1.Pod
		wantCreate  []string
		wantDelete  []string
		wantPhase   appsv1alpha1.BroadcastJobPhase
		wantCounts  [4]int32 // desired, active, succeeded, failed
		wantCond    appsv1alpha1.JobConditionType
		wantDelJob  bool
		wantRequeue time.Duration
	}
	tests := map[string]tcase{
		"a new job gets one pod on every node and is running": {
			job:        job().Obj(),
			nodes:      nodes("node-0", "node-1", "node-2"),
			wantCreate: []string{"node-0", "node-1", "node-2"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{3, 3, 0, 0},
		},
		"a node with a taint the template does not tolerate, and a cordoned node, get no pod": {
			job:        job().Obj(),
			nodes:      append(nodes("node-0"), tainted, cordoned),
			wantCreate: []string{"node-0"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{1, 1, 0, 0},
		},
		"a tolerated taint keeps the node": {
			job:        job().Tolerate("dedicated", "gpu", corev1.TaintEffectNoSchedule).Obj(),
			nodes:      append(nodes("node-0"), tainted),
			wantCreate: []string{"node-0", "node-t"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{2, 2, 0, 0},
		},
		"a nodeSelector limits the nodes": {
			job:        job().NodeSelector(map[string]string{"pool": "a"}).Obj(),
			nodes:      []*corev1.Node{builder.Node("node-0").Label("pool", "a").Obj(), builder.Node("node-1").Label("pool", "b").Obj()},
			wantCreate: []string{"node-0"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{1, 1, 0, 0},
		},
		"parallelism caps the running pods, counting those already running": {
			job:        job().Parallelism(intstr.FromInt32(2)).Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1", "node-2", "node-3"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodRunning)},
			wantCreate: []string{"node-1"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{4, 2, 0, 0},
		},
		"a percentage parallelism is of the desired nodes, rounded up": {
			job:        job().Parallelism(intstr.FromString("50%")).Obj(),
			nodes:      nodes("node-0", "node-1", "node-2"),
			wantCreate: []string{"node-0", "node-1"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{3, 2, 0, 0},
		},
		"policy Always completes once every desired node has a pod that ended": {
			job:        job().Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodSucceeded), jobPod("node-1", corev1.PodSucceeded)},
			wantPhase:  appsv1alpha1.PhaseCompleted,
			wantCounts: [4]int32{2, 0, 2, 0},
			wantCond:   appsv1alpha1.JobComplete,
		},
		"policy Never stays running when every pod ended": {
			job:        job().Never().Status(running(now)).Obj(),
			nodes:      nodes("node-0"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodSucceeded)},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{1, 0, 1, 0},
		},
		"policy Never gives a node added later its pod": {
			job:        job().Never().Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodSucceeded)},
			wantCreate: []string{"node-1"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{2, 1, 1, 0},
		},
		"the active deadline passing fails the job and deletes its running pods": {
			job:         job().ActiveDeadline(10).Status(running(now.Add(-10 * time.Second))).Obj(),
			nodes:       nodes("node-0", "node-1"),
			pods:        []*corev1.Pod{jobPod("node-0", corev1.PodRunning)},
			wantDelete:  []string{"job-node-0"},
			wantPhase:   appsv1alpha1.PhaseFailed,
			wantCounts:  [4]int32{2, 0, 0, 1},
			wantCond:    appsv1alpha1.JobFailed,
			wantRequeue: 0,
		},
		"before the active deadline the job runs and is looked at again when it passes": {
			job:         job().ActiveDeadline(10).Status(running(now.Add(-4 * time.Second))).Obj(),
			nodes:       nodes("node-0"),
			pods:        []*corev1.Pod{jobPod("node-0", corev1.PodRunning)},
			wantPhase:   appsv1alpha1.PhaseRunning,
			wantCounts:  [4]int32{1, 1, 0, 0},
			wantRequeue: 6 * time.Second,
		},
		"a failed pod under FailFast fails the job and deletes the running pods": {
			job:        job().Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1", "node-2"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodFailed), jobPod("node-1", corev1.PodRunning)},
			wantDelete: []string{"job-node-1"},
			wantPhase:  appsv1alpha1.PhaseFailed,
			wantCounts: [4]int32{3, 0, 0, 2},
			wantCond:   appsv1alpha1.JobFailed,
		},
		"a failed pod under Continue lets the job go on and complete": {
			job:        job().FailurePolicy(appsv1alpha1.FailurePolicyTypeContinue, 0).Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodFailed), jobPod("node-1", corev1.PodSucceeded)},
			wantPhase:  appsv1alpha1.PhaseCompleted,
			wantCounts: [4]int32{2, 0, 1, 1},
			wantCond:   appsv1alpha1.JobComplete,
		},
		"a failed pod under Pause pauses the job and creates nothing more": {
			job:        job().FailurePolicy(appsv1alpha1.FailurePolicyTypePause, 0).Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodFailed)},
			wantPhase:  appsv1alpha1.PhasePaused,
			wantCounts: [4]int32{2, 0, 0, 1},
		},
		"an OnFailure pod restarted more than restartLimit times counts as failed": {
			job:        job().FailurePolicy(appsv1alpha1.FailurePolicyTypeFailFast, 2).RestartPolicy(corev1.RestartPolicyOnFailure).Status(running(now)).Obj(),
			nodes:      nodes("node-0"),
			pods:       []*corev1.Pod{restartedPod(3)},
			wantPhase:  appsv1alpha1.PhaseFailed,
			wantCounts: [4]int32{1, 0, 0, 1},
			wantCond:   appsv1alpha1.JobFailed,
		},
		"an OnFailure pod within restartLimit stays active": {
			job:        job().FailurePolicy(appsv1alpha1.FailurePolicyTypeFailFast, 2).RestartPolicy(corev1.RestartPolicyOnFailure).Status(running(now)).Obj(),
			nodes:      nodes("node-0"),
			pods:       []*corev1.Pod{restartedPod(2)},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{1, 1, 0, 0},
		},
		"a paused job creates no pods and shows phase paused": {
			job:        job().Paused(true).Status(running(now)).Obj(),
			nodes:      nodes("node-0", "node-1"),
			pods:       []*corev1.Pod{jobPod("node-0", corev1.PodRunning)},
			wantPhase:  appsv1alpha1.PhasePaused,
			wantCounts: [4]int32{2, 1, 0, 0},
		},
		"an unpaused job runs again": {
			job: job().Status(func() appsv1alpha1.BroadcastJobStatus {
				s := running(now)
				s.Phase = appsv1alpha1.PhasePaused
				return s
			}()).Obj(),
			nodes:      nodes("node-0"),
			wantCreate: []string{"node-0"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{1, 1, 0, 0},
		},
		"a pod whose node stopped fitting is deleted": {
			job:   job().NodeSelector(map[string]string{"pool": "a"}).Status(running(now)).Obj(),
			nodes: []*corev1.Node{builder.Node("node-0").Label("pool", "b").Obj()},
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := jobPod("node-0", corev1.PodRunning)
				p.Spec.NodeSelector = map[string]string{"pool": "a"}
				return p
			}()},
			wantDelete: []string{"job-node-0"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{0, 0, 0, 1},
		},
		"a finished job past its TTL is deleted": {
			job: job().TTL(5).Status(appsv1alpha1.BroadcastJobStatus{Phase: appsv1alpha1.PhaseCompleted, CompletionTime: &metav1.Time{Time: now.Add(-5 * time.Second)},
				Conditions: []appsv1alpha1.JobCondition{{Type: appsv1alpha1.JobComplete, Status: corev1.ConditionTrue}}}).Obj(),
			nodes:      nodes("node-0"),
			wantPhase:  appsv1alpha1.PhaseCompleted,
			wantCond:   appsv1alpha1.JobComplete,
			wantDelJob: true,
		},
		"a finished job within its TTL waits for it and does nothing else": {
			job: job().TTL(5).Status(appsv1alpha1.BroadcastJobStatus{Phase: appsv1alpha1.PhaseCompleted, CompletionTime: &metav1.Time{Time: now.Add(-2 * time.Second)},
				Conditions: []appsv1alpha1.JobCondition{{Type: appsv1alpha1.JobComplete, Status: corev1.ConditionTrue}}}).Obj(),
			nodes:       nodes("node-0", "node-1"),
			wantPhase:   appsv1alpha1.PhaseCompleted,
			wantCond:    appsv1alpha1.JobComplete,
			wantRequeue: 3 * time.Second,
		},
		"completing with a TTL looks at the job again when the TTL ends": {
			job:         job().TTL(7).Status(running(now)).Obj(),
			nodes:       nodes("node-0"),
			pods:        []*corev1.Pod{jobPod("node-0", corev1.PodSucceeded)},
			wantPhase:   appsv1alpha1.PhaseCompleted,
			wantCounts:  [4]int32{1, 0, 1, 0},
			wantCond:    appsv1alpha1.JobComplete,
			wantRequeue: 7 * time.Second,
		},
		"a node whose allocatable cannot hold the template's requests is not desired, and the job completes without it": {
			job:   job().Requests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}).Status(running(now)).Obj(),
			nodes: []*corev1.Node{builder.Node("node-0").Obj(), builder.Node("node-small").Capacity("1", "4Gi", 110).Obj()},
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := jobPod("node-0", corev1.PodSucceeded)
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
				return p
			}()},
			wantPhase:  appsv1alpha1.PhaseCompleted,
			wantCounts: [4]int32{1, 0, 1, 0},
			wantCond:   appsv1alpha1.JobComplete,
		},
		"a pod whose node's allocatable shrank below its requests is deleted": {
			job:   job().Requests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}).Status(running(now)).Obj(),
			nodes: []*corev1.Node{builder.Node("node-0").Capacity("1", "4Gi", 110).Obj()},
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := jobPod("node-0", corev1.PodRunning)
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
				return p
			}()},
			wantDelete: []string{"job-node-0"},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{0, 0, 0, 1},
		},
		"with no eligible node the job waits, running": {
			job:        job().Status(running(now)).Obj(),
			nodes:      []*corev1.Node{tainted},
			wantPhase:  appsv1alpha1.PhaseRunning,
			wantCounts: [4]int32{0, 0, 0, 0},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		p, err := planPass(planInput{job: tt.job, nodes: tt.nodes, pods: tt.pods, now: now})
		if err != nil {
			t.Fatalf("planPass: %v", err)
		}
		var gotDelete []string
		for _, d := range p.delete {
			gotDelete = append(gotDelete, d.Name)
		}
		st := p.status
		var gotCond appsv1alpha1.JobConditionType
		for _, c := range st.Conditions {
			if c.Status == corev1.ConditionTrue {
				gotCond = c.Type
			}
		}
		type result struct {
			Create  []string
			Delete  []string
			Phase   appsv1alpha1.BroadcastJobPhase
			Counts  [4]int32
			Cond    appsv1alpha1.JobConditionType
			DelJob  bool
			Requeue time.Duration
		}
		want := result{tt.wantCreate, tt.wantDelete, tt.wantPhase, tt.wantCounts, tt.wantCond, tt.wantDelJob, tt.wantRequeue}
		got := result{p.create, gotDelete, st.Phase, [4]int32{st.Desired, st.Active, st.Succeeded, st.Failed}, gotCond, p.deleteJob, p.requeueAfter}
		testkit.Diff(t, "plan", want, got)
		if tt.job.Status.CompletionTime == nil && st.StartTime == nil {
			t.Errorf("status.startTime is not set")
		}
	})
}

func TestNewPodIsPinnedToItsNode(t *testing.T) {
	job := kinds.BroadcastJob("job", "ns").UID("uid-1").Obj()
	for _, tt := range []struct {
		name         string
		byScheduler  bool
		wantNodeName string
	}{
		{"by the scheduler, the pod names its node in a required node affinity and has no nodeName", true, ""},
		{"without the scheduler, the pod's nodeName is the node", false, "node-1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{opts: Options{AssignPodsByScheduler: tt.byScheduler}}
			pod := r.newPod(job, "node-1")
			if pod.Spec.NodeName != tt.wantNodeName {
				t.Errorf("nodeName = %q, want %q", pod.Spec.NodeName, tt.wantNodeName)
			}
			pod.Spec.NodeName = ""
			if got := nodepin.TargetNode(pod); tt.byScheduler && got != "node-1" {
				t.Errorf("target node by affinity = %q, want node-1", got)
			}
			want := map[string]string{"app": "job", appsv1alpha1.BroadcastJobNameLabel: "job", appsv1alpha1.BroadcastJobControllerUIDLabel: "uid-1"}
			testkit.Diff(t, "labels", want, pod.Labels)
		})
	}
}

package sidecarterminator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// jobPod builds a running job pod: each container is added with its env and state.
type jobPod struct{ p *corev1.Pod }

func newJobPod(policy corev1.RestartPolicy) *jobPod {
	return &jobPod{&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-0", Namespace: "ns", UID: "uid-1"},
		Spec:       corev1.PodSpec{RestartPolicy: policy, NodeName: "node-0"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

// running adds a container still running; exited adds one that exited with code.
func (b *jobPod) running(name string, env ...corev1.EnvVar) *jobPod {
	return b.add(name, env, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
}

func (b *jobPod) exited(name string, code int32, env ...corev1.EnvVar) *jobPod {
	return b.add(name, env, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}})
}

func (b *jobPod) add(name string, env []corev1.EnvVar, st corev1.ContainerState) *jobPod {
	b.p.Spec.Containers = append(b.p.Spec.Containers, corev1.Container{Name: name, Image: name + ":1", Env: env})
	b.p.Status.ContainerStatuses = append(b.p.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, State: st})
	return b
}

func (b *jobPod) phase(p corev1.PodPhase) *jobPod { b.p.Status.Phase = p; return b }

var (
	sidecarEnv    = corev1.EnvVar{Name: appsv1alpha1.KruiseTerminateSidecarEnv, Value: "true"}
	ignoreExitEnv = corev1.EnvVar{Name: appsv1alpha1.KruiseIgnoreContainerExitCodeEnv, Value: "true"}
	withImageEnv  = corev1.EnvVar{Name: appsv1alpha1.KruiseTerminateSidecarWithImageEnv, Value: "stop:1"}
)

func TestDecide(t *testing.T) {
	type tcase struct {
		pod     *jobPod
		virtual bool
		want    plan
	}
	cases := map[string]tcase{
		"a Never pod whose main container exited has its sidecar stopped by a ContainerRecreateRequest": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", sidecarEnv),
			want: plan{stop: []string{"proxy"}},
		},
		"a Never pod whose main container failed has its sidecar stopped too": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 1).running("proxy", sidecarEnv),
			want: plan{stop: []string{"proxy"}},
		},
		"a pod whose main container still runs is left alone": {
			pod: newJobPod(corev1.RestartPolicyNever).running("main").running("proxy", sidecarEnv),
		},
		"an OnFailure pod whose main container failed is left alone: the kubelet restarts it": {
			pod: newJobPod(corev1.RestartPolicyOnFailure).exited("main", 1).running("proxy", sidecarEnv),
		},
		"an OnFailure pod whose main container succeeded has its sidecar stopped": {
			pod:  newJobPod(corev1.RestartPolicyOnFailure).exited("main", 0).running("proxy", sidecarEnv),
			want: plan{stop: []string{"proxy"}},
		},
		"an Always pod is left alone whatever its containers do": {
			pod: newJobPod(corev1.RestartPolicyAlways).exited("main", 0).running("proxy", sidecarEnv),
		},
		"a container without the env, or with it not true, is a main container": {
			pod: newJobPod(corev1.RestartPolicyNever).exited("main", 0).
				running("other", corev1.EnvVar{Name: appsv1alpha1.KruiseTerminateSidecarEnv, Value: "false"}),
		},
		"the env's value is read without regard to case, as 1.8 does": {
			pod: newJobPod(corev1.RestartPolicyNever).exited("main", 0).
				running("proxy", corev1.EnvVar{Name: appsv1alpha1.KruiseTerminateSidecarEnv, Value: "TRUE"}),
			want: plan{stop: []string{"proxy"}},
		},
		"only the sidecars still running are stopped": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 0).exited("log", 0, sidecarEnv).running("proxy", sidecarEnv),
			want: plan{stop: []string{"proxy"}},
		},
		"a pod whose kubelet has not reported every container yet is left alone": {
			pod: func() *jobPod {
				b := newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", sidecarEnv)
				b.p.Status.ContainerStatuses = b.p.Status.ContainerStatuses[:1]
				return b
			}(),
		},
		"a pending pod is left alone": {
			pod: newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", sidecarEnv).phase(corev1.PodPending),
		},
		"a sidecar whose exit code is ignored is stopped after the pod is marked Succeeded, its main containers having succeeded": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", sidecarEnv, ignoreExitEnv),
			want: plan{terminate: corev1.PodSucceeded, stopIgnoringExitCode: []string{"proxy"}},
		},
		"a sidecar whose exit code is ignored is stopped after the pod is marked Failed when a main container failed": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 1).running("proxy", sidecarEnv, ignoreExitEnv),
			want: plan{terminate: corev1.PodFailed, stopIgnoringExitCode: []string{"proxy"}},
		},
		"a pod already marked keeps its phase and has the sidecar whose exit code is ignored stopped": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", sidecarEnv, ignoreExitEnv).phase(corev1.PodSucceeded),
			want: plan{stopIgnoringExitCode: []string{"proxy"}},
		},
		"the pod is marked only once its other sidecars have stopped": {
			pod:  newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("log", sidecarEnv).running("proxy", sidecarEnv, ignoreExitEnv),
			want: plan{stop: []string{"log"}},
		},
		"on a virtual-kubelet node a sidecar with a stop image gets it in place": {
			pod:     newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", withImageEnv),
			virtual: true,
			want:    plan{swapImages: map[string]string{"proxy": "stop:1"}},
		},
		"on a virtual-kubelet node a sidecar without a stop image is left running": {
			pod:     newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", sidecarEnv),
			virtual: true,
		},
		"on a normal node a sidecar with only a stop image is left running": {
			pod: newJobPod(corev1.RestartPolicyNever).exited("main", 0).running("proxy", withImageEnv),
		},
		"a native sidecar (an init container with restartPolicy Always) is the kubelet's to stop": {
			pod: func() *jobPod {
				b := newJobPod(corev1.RestartPolicyNever).exited("main", 0)
				always := corev1.ContainerRestartPolicyAlways
				b.p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always, Env: []corev1.EnvVar{sidecarEnv}}}
				b.p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
				return b
			}(),
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "plan", tc.want, decide(tc.pod.p, tc.virtual), cmp.AllowUnexported(plan{}))
	})
}

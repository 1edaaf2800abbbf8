package containerrecreaterequest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func request(containers ...string) *appsv1alpha1.ContainerRecreateRequest {
	crr := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}}
	crr.Spec.PodName = "web-0"
	for _, c := range containers {
		crr.Spec.Containers = append(crr.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: c})
	}
	return crr
}

func runningPod() *corev1.Pod {
	hook := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain"}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "uid-1"},
		Spec: corev1.PodSpec{
			NodeName:                      "node-1",
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{
				{Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80}}, Lifecycle: &corev1.Lifecycle{PreStop: hook}},
				{Name: "sidecar"},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", ContainerID: "containerd://aaa", RestartCount: 2},
			{Name: "sidecar", ContainerID: "containerd://bbb"},
		}},
	}
}

func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*appsv1alpha1.ContainerRecreateRequest)
		wantErrs []string
	}{
		{name: "a request naming a pod and a container is valid", mutate: func(*appsv1alpha1.ContainerRecreateRequest) {}},
		{
			name:     "a request without containers is refused",
			mutate:   func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.Containers = nil },
			wantErrs: []string{"spec.containers: Required value: list at least one container to recreate"},
		},
		{
			name:     "an activeDeadlineSeconds under 3 is refused",
			mutate:   func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.ActiveDeadlineSeconds = ptr.To[int64](2) },
			wantErrs: []string{"spec.activeDeadlineSeconds: Invalid value: 2: must be at least 3"},
		},
		{
			name: "an unknown failure policy is refused with the valid ones",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) {
				c.Spec.Strategy = &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: "Retry"}
			},
			wantErrs: []string{`spec.strategy.failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"`},
		},
		{
			name: "a container named twice is refused",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) {
				c.Spec.Containers = append(c.Spec.Containers, c.Spec.Containers[0])
			},
			wantErrs: []string{`spec.containers[1].name: Duplicate value: "app"`},
		},
		{
			name: "a statusContext set by the user is refused as read-only",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) {
				c.Spec.Containers[0].StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "x"}
			},
			wantErrs: []string{"spec.containers[0].statusContext: Forbidden: is read-only: recorded from the pod's status"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crr := request("app")
			tt.mutate(crr)
			errs := validateCreate(crr)
			if diff := cmp.Diff(tt.wantErrs, webhooktest.Messages(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFillFromPod(t *testing.T) {
	filled := func() *appsv1alpha1.ContainerRecreateRequest {
		crr := request("app", "sidecar")
		crr.Labels = map[string]string{
			appsv1alpha1.ContainerRecreateRequestPodNameKey:  "web-0",
			appsv1alpha1.ContainerRecreateRequestActiveKey:   "true",
			appsv1alpha1.ContainerRecreateRequestNodeNameKey: "node-1",
			appsv1alpha1.ContainerRecreateRequestPodUIDKey:   "uid-1",
		}
		crr.Spec.Strategy = &appsv1alpha1.ContainerRecreateRequestStrategy{
			FailurePolicy:                 appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
		}
		crr.Spec.Containers[0].PreStop = &appsv1alpha1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain"}}
		crr.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
		crr.Spec.Containers[0].StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://aaa", RestartCount: 2}
		crr.Spec.Containers[1].StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://bbb"}
		return crr
	}
	tests := []struct {
		name     string
		crr      *appsv1alpha1.ContainerRecreateRequest
		pod      func(*corev1.Pod)
		want     *appsv1alpha1.ContainerRecreateRequest
		wantErrs []string
	}{
		{
			name: "labels, grace period, preStop with ports and each statusContext come from the pod",
			crr:  request("app", "sidecar"),
			pod:  func(*corev1.Pod) {},
			want: filled(),
		},
		{
			name:     "a pending pod is refused",
			crr:      request("app"),
			pod:      func(p *corev1.Pod) { p.Spec.NodeName = "" },
			wantErrs: []string{`spec.podName: Invalid value: "web-0": the pod is pending; containers can be recreated only once it runs on a node`},
		},
		{
			name:     "a finished pod is refused",
			crr:      request("app"),
			pod:      func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
			wantErrs: []string{`spec.podName: Invalid value: "web-0": the pod is not active; containers can be recreated only in a running pod`},
		},
		{
			name: "a finished pod whose phase the SidecarTerminator ended is let through, as in 1.8",
			crr:  request("app", "sidecar"),
			pod: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: appsv1alpha1.SidecarTerminatedCondition, Status: corev1.ConditionTrue})
			},
			want: filled(),
		},
		{
			name:     "a container the pod does not have is refused",
			crr:      request("db"),
			pod:      func(*corev1.Pod) {},
			wantErrs: []string{`spec.containers[0].name: Not found: "db"`},
		},
		{
			name:     "a container without a containerID yet is refused",
			crr:      request("sidecar"),
			pod:      func(p *corev1.Pod) { p.Status.ContainerStatuses[1].ContainerID = "" },
			wantErrs: []string{`spec.containers[0].name: Invalid value: "sidecar": the container has no containerID in the pod's status yet; retry once it has started`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := runningPod()
			tt.pod(pod)
			setDefaults(tt.crr)
			errs := fillFromPod(tt.crr, pod)
			if diff := cmp.Diff(tt.wantErrs, webhooktest.Messages(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, tt.crr); diff != "" {
					t.Errorf("request (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*appsv1alpha1.ContainerRecreateRequest)
		wantErrs []string
	}{
		{
			name:   "completing spec.containers is allowed",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.Containers[0].StatusContext = nil },
		},
		{
			name:     "changing the strategy is refused",
			mutate:   func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.Strategy.OrderedRecreate = true },
			wantErrs: []string{"spec: Forbidden: is immutable, except spec.containers"},
		},
		{
			name: "moving the node label is refused",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) {
				c.Labels[appsv1alpha1.ContainerRecreateRequestNodeNameKey] = "node-2"
			},
			wantErrs: []string{"metadata.labels[crr.apps.kruise.io/node-name]: Forbidden: is immutable"},
		},
		{
			name: "dropping the active label on completion is allowed",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) {
				delete(c.Labels, appsv1alpha1.ContainerRecreateRequestActiveKey)
			},
		},
		{
			name: "rewriting the unready-acquired time is refused",
			mutate: func(c *appsv1alpha1.ContainerRecreateRequest) {
				c.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey] = "2026-01-01T00:00:09Z"
			},
			wantErrs: []string{"metadata.annotations[crr.apps.kruise.io/unready-acquired]: Forbidden: is immutable once set"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := request("app")
			setDefaults(old)
			if errs := fillFromPod(old, runningPod()); len(errs) > 0 {
				t.Fatal(errs)
			}
			old.Annotations = map[string]string{appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey: "2026-01-01T00:00:00Z"}
			crr := old.DeepCopy()
			tt.mutate(crr)
			errs := validateUpdate(crr, old)
			if diff := cmp.Diff(tt.wantErrs, webhooktest.Messages(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

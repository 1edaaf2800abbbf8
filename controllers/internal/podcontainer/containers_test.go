package podcontainer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSpecAndStatus(t *testing.T) {
	pod := &corev1.Pod{
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "app:1"}, {Name: "agent", Image: "agent:1"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", RestartCount: 2}}},
	}
	if c := Spec(pod, "agent"); c == nil || c != &pod.Spec.Containers[1] {
		t.Errorf("Spec(agent) = %v, want the pod's own second container", c)
	}
	if s := Status(pod, "agent"); s == nil || s != &pod.Status.ContainerStatuses[0] {
		t.Errorf("Status(agent) = %v, want the pod's own status entry", s)
	}
	if c, s := Spec(pod, "gone"), Status(pod, "main"); c != nil || s != nil {
		t.Errorf("a name the pod lacks gives nil: got %v, %v", c, s)
	}
}

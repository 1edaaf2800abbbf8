package containerrecreaterequest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// FuzzMutatingContainerRecreateRequest feeds arbitrary requests to the CRR webhook, with one
// running pod to target: it must never panic, and must answer with a known code or patches that
// apply to the request.
func FuzzMutatingContainerRecreateRequest(f *testing.F) {
	webhooktest.Seeds{Files: []string{"containerrecreaterequests.yaml"}, Inputs: []webhooktest.Input{
		{Op: 0, Obj: `{"metadata":{"namespace":"ns"},"spec":{"podName":"web-a","containers":[{"name":"main"},{"name":"main"},{"name":"gone"}],"strategy":{"failurePolicy":"Bad"}}}`},
	}}.Add(f)
	reader := webhooktest.Reader(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "ns", UID: "uid-a"},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "main", Image: "nginx"}, {Name: "side", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "main", ContainerID: "containerd://a", Ready: true},
			{Name: "side", ContainerID: "containerd://b", Ready: true},
		}},
	})
	webhooktest.Fuzz(f, NewMutatingHandler(webhooktest.Decoder(), reader, features.NewGate()), nil)
}

package nodeops

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// Named timeouts for waits.
const (
	// startup is how long the manager may take to serve its webhooks.
	startup = 60 * time.Second
	// settle is how long a pod or a controller reaction may take.
	settle = 30 * time.Second
	// quiet is how long a paused AdvancedCronJob is watched for a run it must not start.
	quiet = 3 * time.Second
	// poll is the interval at which waits look again.
	poll = 100 * time.Millisecond
)

const kruisePodReady = appspub.KruisePodReadyConditionType

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := builder.Namespace("").GenerateName(prefix).Obj()
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	return ns.Name
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// eventually polls cond until it returns nil or timeout passes, then fails with its last error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), poll, timeout, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

// consistently polls cond for the whole of d and fails at its first error.
func consistently(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		if err := cond(context.Background()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return false, nil
	})
}

func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

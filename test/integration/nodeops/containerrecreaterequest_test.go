package nodeops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

func newCRR(ns, name, pod string, strategy *appsv1alpha1.ContainerRecreateRequestStrategy) *appsv1alpha1.ContainerRecreateRequest {
	return &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName:    pod,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "main"}},
			Strategy:   strategy,
		},
	}
}

// requestOnRunningPod creates a namespace, a running pod web-0 in it and a request to recreate
// its main container, with its spec changed by spec when that is not nil, and returns the
// namespace and the request.
func requestOnRunningPod(t *testing.T, name string, spec func(*appsv1alpha1.ContainerRecreateRequestSpec)) (string, *appsv1alpha1.ContainerRecreateRequest) {
	t.Helper()
	ns := framework.NewNamespace(t, env.Client, "crr-", nil)
	runningPodWithGate(t, ns, "web-0")
	crr := newCRR(ns, name, "web-0", nil)
	if spec != nil {
		spec(&crr.Spec)
	}
	framework.Create(t, env.Client, crr)
	return ns, crr
}

func getCRR(ctx context.Context, ns, name string) (*appsv1alpha1.ContainerRecreateRequest, error) {
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	return crr, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, crr)
}

// daemonWrites plays kruise-daemon: it sets the request's phase and per-container states.
func daemonWrites(t *testing.T, ns, name string, phase appsv1alpha1.ContainerRecreateRequestPhase, states ...appsv1alpha1.ContainerRecreateRequestContainerRecreateState) {
	t.Helper()
	framework.ChangeStatus(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, func(crr *appsv1alpha1.ContainerRecreateRequest) {
		crr.Status.Phase = phase
		crr.Status.ContainerRecreateStates = states
	})
}

func waitCompleted(t *testing.T, ns, name string) *appsv1alpha1.ContainerRecreateRequest {
	t.Helper()
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, framework.Medium, "request "+name+" is Completed without its active label", func(crr *appsv1alpha1.ContainerRecreateRequest) error {
		if crr.Status.Phase != appsv1alpha1.ContainerRecreateRequestCompleted || crr.Status.CompletionTime == nil {
			return fmt.Errorf("phase %q, completionTime %v", crr.Status.Phase, crr.Status.CompletionTime)
		}
		if _, ok := crr.Labels[appsv1alpha1.ContainerRecreateRequestActiveKey]; ok {
			return fmt.Errorf("still labelled active")
		}
		return nil
	})
}

func TestCRRWebhookFillsNodeAndStatusContext(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "crr-", nil)
	pod := runningPodWithGate(t, ns, "web-0")
	framework.Create(t, env.Client, newCRR(ns, "restart", "web-0", nil))

	crr, err := getCRR(context.Background(), ns, "restart")
	if err != nil {
		t.Fatal(err)
	}
	st := framework.ContainerStatus(pod, "main")
	wantLabels := map[string]string{
		appsv1alpha1.ContainerRecreateRequestNodeNameKey: "node-0",
		appsv1alpha1.ContainerRecreateRequestPodNameKey:  "web-0",
		appsv1alpha1.ContainerRecreateRequestPodUIDKey:   string(pod.UID),
		appsv1alpha1.ContainerRecreateRequestActiveKey:   "true",
	}
	want := []any{
		wantLabels,
		&appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: st.ContainerID, RestartCount: st.RestartCount},
		appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
		ptr.To[int64](7),
	}
	got := []any{crr.Labels, crr.Spec.Containers[0].StatusContext, crr.Spec.Strategy.FailurePolicy, crr.Spec.Strategy.TerminationGracePeriodSeconds}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels, statusContext, failurePolicy, terminationGracePeriodSeconds (-want +got):\n%s", diff)
	}

	t.Run("a container the pod does not have is refused with the field", func(t *testing.T) {
		bad := newCRR(ns, "bad", "web-0", nil)
		bad.Spec.Containers[0].Name = "db"
		err := env.Client.Create(context.Background(), bad)
		if err == nil || !strings.Contains(err.Error(), `spec.containers[0].name: Not found: "db"`) {
			t.Errorf("create: %v, want the missing container named", err)
		}
	})
	t.Run("a missing pod is refused", func(t *testing.T) {
		err := env.Client.Create(context.Background(), newCRR(ns, "nopod", "web-9", nil))
		if err == nil || !strings.Contains(err.Error(), "pod web-9 not found") {
			t.Errorf("create: %v, want the missing pod named", err)
		}
	})
	t.Run("the node label cannot be changed", func(t *testing.T) {
		crr, err := getCRR(context.Background(), ns, "restart")
		if err != nil {
			t.Fatal(err)
		}
		crr.Labels[appsv1alpha1.ContainerRecreateRequestNodeNameKey] = "node-1"
		err = env.Client.Update(context.Background(), crr)
		if err == nil || !strings.Contains(err.Error(), "crr.apps.kruise.io/node-name]: Forbidden: is immutable") {
			t.Errorf("update: %v, want the label refused", err)
		}
	})
}

// requestOncePodReadyIs reads request name once both KruisePodReady and Ready of pod are want.
func requestOncePodReadyIs(ctx context.Context, ns, pod, name string, want corev1.ConditionStatus) (*appsv1alpha1.ContainerRecreateRequest, error) {
	p := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p); err != nil {
		return nil, err
	}
	if c, r := framework.PodCondition(p, kruisePodReady), framework.PodCondition(p, corev1.PodReady); c != want || r != want {
		return nil, fmt.Errorf("KruisePodReady %q, Ready %q", c, r)
	}
	return getCRR(ctx, ns, name)
}

func TestCRRUnreadyGracePeriodHoldsPodNotReady(t *testing.T) {
	ns, _ := requestOnRunningPod(t, "drain", func(s *appsv1alpha1.ContainerRecreateRequestSpec) {
		s.Strategy = &appsv1alpha1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](1)}
	})

	// The daemon picks the request up; before it stops anything it waits for the hold.
	daemonWrites(t, ns, "drain", appsv1alpha1.ContainerRecreateRequestRecreating)
	framework.Eventually(t, framework.Medium, "the pod is held not-ready and the hold is recorded", func(ctx context.Context) error {
		crr, err := requestOncePodReadyIs(ctx, ns, "web-0", "drain", corev1.ConditionFalse)
		if err != nil {
			return err
		}
		if crr.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey] == "" {
			return fmt.Errorf("no %s annotation", appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey)
		}
		if !slices.Contains(crr.Finalizers, appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey) {
			return fmt.Errorf("no finalizer guarding the hold")
		}
		return nil
	})

	// The daemon stops the container, then reports it recreated.
	daemonWrites(t, ns, "drain", appsv1alpha1.ContainerRecreateRequestRecreating,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestRecreating, IsKilled: true})
	daemonWrites(t, ns, "drain", appsv1alpha1.ContainerRecreateRequestRecreating,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestSucceeded, IsKilled: true})
	crr := waitCompleted(t, ns, "drain")
	if crr.Status.Message != "" {
		t.Errorf("message %q after success, want none", crr.Status.Message)
	}
	framework.Eventually(t, framework.Medium, "the pod is ready again and the finalizer is gone", func(ctx context.Context) error {
		crr, err := requestOncePodReadyIs(ctx, ns, "web-0", "drain", corev1.ConditionTrue)
		if err != nil {
			return err
		}
		if len(crr.Finalizers) > 0 {
			return fmt.Errorf("finalizers %v", crr.Finalizers)
		}
		return nil
	})
}

// TestCRRPastActiveDeadlineCompletesAndKeepsTheDaemonsStates checks a request past
// activeDeadlineSeconds is Completed with the deadline message while its container states stay
// as the daemon wrote them.
func TestCRRPastActiveDeadlineCompletesAndKeepsTheDaemonsStates(t *testing.T) {
	ns, _ := requestOnRunningPod(t, "slow", func(s *appsv1alpha1.ContainerRecreateRequestSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](3) })
	daemonWrites(t, ns, "slow", appsv1alpha1.ContainerRecreateRequestRecreating,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestRecreating})

	got := waitCompleted(t, ns, "slow")
	want := []any{"recreating has exceeded the activeDeadlineSeconds", []appsv1alpha1.ContainerRecreateRequestContainerRecreateState{
		{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestRecreating},
	}}
	if diff := cmp.Diff(want, []any{got.Status.Message, got.Status.ContainerRecreateStates}); diff != "" {
		t.Errorf("message, states (-want +got):\n%s", diff)
	}
}

func TestCRRTTLDeletesIt(t *testing.T) {
	ns, crr := requestOnRunningPod(t, "brief", func(s *appsv1alpha1.ContainerRecreateRequestSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](1) })
	daemonWrites(t, ns, "brief", appsv1alpha1.ContainerRecreateRequestRecreating,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "main", Phase: appsv1alpha1.ContainerRecreateRequestSucceeded, IsKilled: true})
	framework.WaitGone(t, env.Client, client.ObjectKeyFromObject(crr), &appsv1alpha1.ContainerRecreateRequest{}, framework.Medium, "the completed request is deleted after its ttl")
}

func TestCRRPodGoneCompletesIt(t *testing.T) {
	ns, _ := requestOnRunningPod(t, "orphan", nil)
	framework.Delete(t, env.Client, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0"}})
	got := waitCompleted(t, ns, "orphan")
	if got.Status.Message != "pod has gone" {
		t.Errorf("message %q, want pod has gone", got.Status.Message)
	}
}

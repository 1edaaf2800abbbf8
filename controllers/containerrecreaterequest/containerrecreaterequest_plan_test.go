package containerrecreaterequest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var created = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

type crrBuilder struct {
	c *appsv1alpha1.ContainerRecreateRequest
}

func newCRR(containers ...string) *crrBuilder {
	c := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{
		Name: "r", Namespace: "ns", CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{
			appsv1alpha1.ContainerRecreateRequestPodUIDKey: "uid-1",
			appsv1alpha1.ContainerRecreateRequestActiveKey: "true",
		},
	}}
	c.Spec.PodName = "web-0"
	c.Spec.Strategy = &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyFail}
	for _, n := range containers {
		c.Spec.Containers = append(c.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: n})
	}
	return &crrBuilder{c}
}

func (b *crrBuilder) phase(p appsv1alpha1.ContainerRecreateRequestPhase) *crrBuilder {
	b.c.Status.Phase = p
	return b
}

func (b *crrBuilder) state(name string, p appsv1alpha1.ContainerRecreateRequestPhase) *crrBuilder {
	b.c.Status.ContainerRecreateStates = append(b.c.Status.ContainerRecreateStates,
		appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: name, Phase: p, Message: "m"})
	return b
}

func (b *crrBuilder) with(f func(*appsv1alpha1.ContainerRecreateRequest)) *crrBuilder {
	f(b.c)
	return b
}

func (b *crrBuilder) obj() *appsv1alpha1.ContainerRecreateRequest { return b.c }

// pod runs container app, started at startedAt.
func pod(startedAt time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "uid-1"},
		Spec:       corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Ready: true, RestartCount: 1, ContainerID: "containerd://new",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}},
		}}},
	}
}

// finishedWithTTL is a request that completed at at, released its active label and is kept ttl
// seconds after it finished.
func finishedWithTTL(at time.Time, ttl int32) *appsv1alpha1.ContainerRecreateRequest {
	return newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestCompleted).with(func(c *appsv1alpha1.ContainerRecreateRequest) {
		c.Status.CompletionTime = ptr.To(metav1.NewTime(at))
		c.Spec.TTLSecondsAfterFinished = ptr.To(ttl)
		delete(c.Labels, appsv1alpha1.ContainerRecreateRequestActiveKey)
	}).obj()
}

func TestDecide(t *testing.T) {
	restarted := created.Add(5 * time.Second)
	synced := `[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://new"}]`
	type tcase struct {
		crr  *appsv1alpha1.ContainerRecreateRequest
		pod  *corev1.Pod
		now  time.Time
		want plan
	}
	tests := map[string]tcase{
		"a new request waits for the daemon until the response timeout": {
			crr:  newCRR("app").obj(),
			pod:  pod(restarted),
			now:  created.Add(20 * time.Second),
			want: plan{requeueAfter: 40 * time.Second},
		},
		"a request the daemon never answered completes after a minute": {
			crr:  newCRR("app").obj(),
			pod:  pod(restarted),
			now:  created.Add(time.Minute),
			want: plan{complete: true, completeMessage: msgNoResponse},
		},
		"a request whose pod is gone completes": {
			crr:  newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).obj(),
			now:  created.Add(time.Second),
			want: plan{complete: true, completeMessage: msgPodGone},
		},
		"a request whose pod was recreated under the same name completes": {
			crr:  newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).obj(),
			pod:  func() *corev1.Pod { p := pod(restarted); p.UID = "uid-2"; return p }(),
			now:  created.Add(time.Second),
			want: plan{complete: true, completeMessage: msgPodGone},
		},
		"a request past activeDeadlineSeconds completes, its container states left as they are": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).state("app", appsv1alpha1.ContainerRecreateRequestRecreating).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) }).obj(),
			pod:  pod(created.Add(-time.Hour)),
			now:  created.Add(10 * time.Second),
			want: plan{complete: true, completeMessage: msgDeadlineExceeded},
		},
		"a Pending request waits for its deadline": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestPending).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) }).obj(),
			pod:  pod(created.Add(-time.Hour)),
			now:  created.Add(4 * time.Second),
			want: plan{requeueAfter: 6 * time.Second},
		},
		"a Recreating request with unreadyGracePeriodSeconds holds the pod not-ready": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) {
					c.Spec.Strategy.UnreadyGracePeriodSeconds = ptr.To[int64](3)
				}).obj(),
			pod:  pod(created.Add(-time.Hour)),
			now:  created.Add(time.Second),
			want: plan{acquire: true, syncStatuses: ptr.To("[]")},
		},
		"a hold already recorded is not taken again": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) {
					c.Spec.Strategy.UnreadyGracePeriodSeconds = ptr.To[int64](3)
					c.Annotations = map[string]string{
						appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey:       created.Format(time.RFC3339),
						appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey: "[]",
					}
				}).obj(),
			pod:  pod(created.Add(-time.Hour)),
			now:  created.Add(time.Second),
			want: plan{},
		},
		"container states from the daemon move the phase to Recreating and the restarted container is synced": {
			crr:  newCRR("app").state("app", appsv1alpha1.ContainerRecreateRequestRecreating).obj(),
			pod:  pod(restarted),
			now:  restarted,
			want: plan{phase: appsv1alpha1.ContainerRecreateRequestRecreating, syncStatuses: ptr.To(synced)},
		},
		"every container Succeeded completes the request": {
			crr:  newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).state("app", appsv1alpha1.ContainerRecreateRequestSucceeded).obj(),
			pod:  pod(restarted),
			now:  restarted,
			want: plan{complete: true},
		},
		"a Succeeded container younger than minStartedSeconds waits": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).state("app", appsv1alpha1.ContainerRecreateRequestSucceeded).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.Strategy.MinStartedSeconds = 10 }).obj(),
			pod:  pod(restarted),
			now:  restarted.Add(4 * time.Second),
			want: plan{syncStatuses: ptr.To(synced), requeueAfter: 6 * time.Second},
		},
		"a Succeeded container past minStartedSeconds completes the request": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestRecreating).state("app", appsv1alpha1.ContainerRecreateRequestSucceeded).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.Strategy.MinStartedSeconds = 10 }).obj(),
			pod:  pod(restarted),
			now:  restarted.Add(10 * time.Second),
			want: plan{complete: true},
		},
		"one Failed container under failurePolicy Fail completes the request at once": {
			crr: newCRR("app", "sidecar").phase(appsv1alpha1.ContainerRecreateRequestRecreating).
				state("app", appsv1alpha1.ContainerRecreateRequestFailed).state("sidecar", appsv1alpha1.ContainerRecreateRequestPending).obj(),
			pod:  pod(restarted),
			now:  restarted,
			want: plan{complete: true, completeMessage: "recreation failed: app: m"},
		},
		"a Failed container under failurePolicy Ignore waits for the others": {
			crr: newCRR("app", "sidecar").phase(appsv1alpha1.ContainerRecreateRequestRecreating).
				state("app", appsv1alpha1.ContainerRecreateRequestFailed).state("sidecar", appsv1alpha1.ContainerRecreateRequestRecreating).
				with(func(c *appsv1alpha1.ContainerRecreateRequest) {
					c.Spec.Strategy.FailurePolicy = appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore
				}).obj(),
			pod:  pod(restarted),
			now:  restarted,
			want: plan{syncStatuses: ptr.To(synced)},
		},
		"a completed request drops its active label and releases its hold": {
			crr: newCRR("app").phase(appsv1alpha1.ContainerRecreateRequestCompleted).with(func(c *appsv1alpha1.ContainerRecreateRequest) {
				c.Status.CompletionTime = ptr.To(metav1.NewTime(restarted))
				c.Finalizers = []string{appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey}
			}).obj(),
			pod:  pod(restarted),
			now:  restarted,
			want: plan{release: true, dropActiveLabel: true},
		},
		"a completed request is kept until ttlSecondsAfterFinished": {
			crr:  finishedWithTTL(restarted, 30),
			pod:  pod(restarted),
			now:  restarted.Add(10 * time.Second),
			want: plan{requeueAfter: 20 * time.Second},
		},
		"a completed request is deleted after ttlSecondsAfterFinished": {
			crr:  finishedWithTTL(restarted, 30),
			now:  restarted.Add(30 * time.Second),
			want: plan{delete: true},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := decide(tt.crr, tt.pod, tt.now)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(plan{})); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
	})
}

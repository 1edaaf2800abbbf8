package sidecarset

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testSet is a SidecarSet "log" at hash "h2" (hash without image "n1") with one cold sidecar.
func testSet() *appsv1alpha1.SidecarSet {
	return &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: "log", Generation: 3, Annotations: map[string]string{
			appsv1alpha1.SidecarSetHashAnnotation: "h2", appsv1alpha1.SidecarSetHashWithoutImageAnnotation: "n1",
		}},
		Spec: appsv1alpha1.SidecarSetSpec{
			Containers: []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "agent", Image: "agent:2"},
				UpgradeStrategy: appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerColdUpgrade}}},
			UpdateStrategy: appsv1alpha1.SidecarSetUpdateStrategy{
				Type: appsv1alpha1.RollingUpdateSidecarSetStrategyType, MaxUnavailable: ptr.To(intstr.FromInt32(1)), Partition: ptr.To(intstr.FromInt32(0)),
			},
		},
		Status: appsv1alpha1.SidecarSetStatus{LatestRevision: "log-rev2"},
	}
}

// podAt is a ready pod created at t0+i seconds running hash/noImage of "log".
func podAt(i int, hash, noImage string, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns", CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second)),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}, {Name: "app", Image: "app:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "agent", Image: "agent:1", ImageID: "id-agent-1", Ready: ready}, {Name: "app", Image: "app:1", ImageID: "id-app", Ready: true}}},
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(t0)}}
	for key, h := range map[string]string{appsv1alpha1.SidecarSetHashAnnotation: hash, appsv1alpha1.SidecarSetHashWithoutImageAnnotation: noImage} {
		if err := inject.WriteUpgradeSpec(p, key, inject.UpgradeSpec{Hash: h, SidecarSetName: "log", SidecarList: []string{"agent"}}); err != nil {
			panic(err)
		}
	}
	p.Annotations[appsv1alpha1.SidecarSetListAnnotation] = "log"
	return p
}

// settling marks an updated pod whose sidecar has not restarted on its new image yet.
func settling(p *corev1.Pod) *corev1.Pod {
	p.Spec.Containers[0].Image = "agent:2"
	if err := writeSidecarState(p, "log", &appspub.InPlaceUpdateState{LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"agent": {ImageID: "id-agent-1"}}}); err != nil {
		panic(err)
	}
	return p
}

func podNames(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestPlanUpdate(t *testing.T) {
	old := func(i int) *corev1.Pod { return podAt(i, "h1", "n1", true) }
	tests := []struct {
		name              string
		change            func(s *appsv1alpha1.SidecarSet)
		pods              []*corev1.Pod
		wantUpdate        []string
		wantNotUpgradable []string
	}{
		{name: "with maxUnavailable 1 one ready pod on an old image is updated, oldest first",
			pods: []*corev1.Pod{old(2), old(0), old(1)}, wantUpdate: []string{"p0"}},
		{name: "maxUnavailable 2 updates two at once",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2)) },
			pods:   []*corev1.Pod{old(0), old(1), old(2)}, wantUpdate: []string{"p0", "p1"}},
		{name: "a percentage maxUnavailable is rounded up",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("34%"))
			},
			pods: []*corev1.Pod{old(0), old(1), old(2)}, wantUpdate: []string{"p0", "p1"}},
		{name: "a pod still settling its update uses up maxUnavailable",
			pods: []*corev1.Pod{settling(podAt(0, "h2", "n1", true)), old(1)}},
		{name: "a pod whose last update left its sidecar not ready is updated again, without counting against maxUnavailable",
			pods: []*corev1.Pod{settling(podAt(0, "h1", "n1", false)), old(1)}, wantUpdate: []string{"p0", "p1"}},
		{name: "a pod whose ready sidecar has not taken its last update yet waits",
			pods: []*corev1.Pod{settling(podAt(0, "h1", "n1", true)), old(1)}, wantUpdate: []string{"p1"}},
		{name: "a pod that is not ready is updated without counting against maxUnavailable",
			pods: []*corev1.Pod{old(0), podAt(1, "h1", "n1", false)}, wantUpdate: []string{"p1", "p0"}},
		{name: "an updated pod that is not ready uses up maxUnavailable",
			pods: []*corev1.Pod{podAt(0, "h2", "n1", false), old(1)}},
		{name: "partition holds back that many pods, the last in update order",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(2))
				s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(5))
			},
			pods: []*corev1.Pod{old(0), old(1), old(2)}, wantUpdate: []string{"p0"}},
		{name: "a partition of all pods updates none",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromString("100%")) },
			pods:   []*corev1.Pod{old(0), old(1)}},
		{name: "the update selector limits the update to the pods it picks",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
				s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(5))
			},
			pods: func() []*corev1.Pod {
				c := old(1)
				c.Labels["canary"] = "true"
				return []*corev1.Pod{old(0), c}
			}(), wantUpdate: []string{"p1"}},
		{name: "a paused update updates none",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.UpdateStrategy.Paused = true },
			pods:   []*corev1.Pod{old(0)}},
		{name: "NotUpdate updates none",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.UpdateStrategy.Type = appsv1alpha1.NotUpdateSidecarSetStrategyType
			},
			pods: []*corev1.Pod{old(0)}},
		{name: "a paused update reports no pod not upgradable",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.UpdateStrategy.Paused = true },
			pods:   []*corev1.Pod{podAt(0, "h1", "n0", true), old(1)}},
		{name: "NotUpdate reports no pod not upgradable",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.UpdateStrategy.Type = appsv1alpha1.NotUpdateSidecarSetStrategyType
			},
			pods: []*corev1.Pod{podAt(0, "h1", "n0", true)}},
		{name: "a pod whose sidecars differ by more than images is not updated and is reported not upgradable",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(5)) },
			pods:   []*corev1.Pod{podAt(0, "h1", "n0", true), old(1)}, wantUpdate: []string{"p1"}, wantNotUpgradable: []string{"p0"}},
		{name: "weight priority updates the heavier pod first",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
					{Weight: 50, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"first": "yes"}}}}}
			},
			pods: func() []*corev1.Pod {
				h := old(1)
				h.Labels["first"] = "yes"
				return []*corev1.Pod{old(0), h}
			}(), wantUpdate: []string{"p1"}},
		{name: "pods already on the latest hash are not updated again",
			pods: []*corev1.Pod{podAt(0, "h2", "n1", true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSet()
			if tt.change != nil {
				tt.change(s)
			}
			p := planUpdate(s, tt.pods, t0.Add(time.Hour))
			got := [][]string{podNames(p.update), podNames(p.notUpgradable)}
			want := [][]string{tt.wantUpdate, tt.wantNotUpgradable}
			for i := range want {
				if want[i] == nil {
					want[i] = []string{}
				}
			}
			testkit.Diff(t, "update, not upgradable", want, got)
		})
	}
}

func TestUpdateSidecars(t *testing.T) {
	s := testSet()
	pod := podAt(0, "h1", "n1", true)
	if err := updateSidecars(pod, s, metav1.NewTime(t0)); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range pod.Spec.Containers {
		got[c.Name] = c.Image
	}
	testkit.Diff(t, "only the sidecar's image changes", map[string]string{"agent": "agent:2", "app": "app:1"}, got)
	if !podUpdated(s, pod) {
		t.Error("the pod does not record the latest hash")
	}
	if specs, _ := inject.ReadUpgradeSpecs(pod, appsv1alpha1.SidecarSetHashAnnotation); specs["log"].ControllerRevision != "log-rev2" {
		t.Errorf("recorded revision %q, want log-rev2", specs["log"].ControllerRevision)
	}
	if sidecarsSettled(s, pod) {
		t.Error("the update counts as settled before the sidecar reports a new image ID")
	}
	pod.Status.ContainerStatuses[0].Image, pod.Status.ContainerStatuses[0].ImageID = "agent:2", "id-agent-2"
	if !sidecarsSettled(s, pod) {
		t.Error("the update is not settled once the sidecar runs the new image")
	}
}

func TestSetUpgradable(t *testing.T) {
	pod := podAt(0, "h1", "n1", true)
	now := metav1.NewTime(t0)
	setUpgradable(pod, "log", true, now)
	setUpgradable(pod, "mesh", false, now)
	c := pod.Status.Conditions[len(pod.Status.Conditions)-1]
	if c.Type != appsv1alpha1.SidecarSetUpgradable || c.Status != corev1.ConditionFalse || c.Reason != reasonImmutableField || c.Message != `{"log":true,"mesh":false}` {
		t.Errorf("one SidecarSet not upgradable: got %+v", c)
	}
	setUpgradable(pod, "mesh", true, now)
	c = pod.Status.Conditions[len(pod.Status.Conditions)-1]
	if c.Status != corev1.ConditionTrue || c.Reason != reasonAllUpgradable {
		t.Errorf("all upgradable: got %+v", c)
	}
	if setUpgradable(pod, "mesh", true, now) {
		t.Error("writing the same answer again reports a change")
	}
}

func TestComputeStatus(t *testing.T) {
	s := testSet()
	pods := []*corev1.Pod{podAt(0, "h2", "n1", true), settling(podAt(1, "h2", "n1", true)), podAt(2, "h1", "n1", true), podAt(3, "h2", "n1", false)}
	got := computeStatus(s, pods, "log-rev2", ptr.To[int32](0))
	want := appsv1alpha1.SidecarSetStatus{ObservedGeneration: 3, MatchedPods: 4, UpdatedPods: 3, ReadyPods: 3, UpdatedReadyPods: 1, LatestRevision: "log-rev2", CollisionCount: ptr.To[int32](0)}
	testkit.Diff(t, "computeStatus", want, got)
}

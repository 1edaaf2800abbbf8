package cloneset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// eventPod is a ready CloneSet pod in Normal with the InPlaceUpdateReady gate and condition.
func eventPod(opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Generation: 1, Labels: map[string]string{appspub.LifecycleStateKey: string(appspub.LifecycleStateNormal)}}}
	p.Spec.Containers = []corev1.Container{{Name: "main", Image: "nginx:1"}}
	inplaceupdate.InjectReadinessGate(p)
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func withAnnotation(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{k: v} }
}

// updatedInPlace is a pod whose in-place update to nginx:2 the kubelet finished (a new image ID),
// with its InPlaceUpdateReady condition at status.
func updatedInPlace(status corev1.ConditionStatus) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = "nginx:2"
		p.Annotations = map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"web-2","lastContainerStatuses":{"main":{"imageID":"id-1"}}}`}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "nginx:2", ImageID: "id-2", Ready: true}}
		p.Status.Conditions[1].Status = status
	}
}

func TestIgnorePodUpdate(t *testing.T) {
	hooked := &appsv1alpha1.CloneSet{Spec: appsv1alpha1.CloneSetSpec{Lifecycle: &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/hold"}}}}}
	type tcase struct {
		cs         *appsv1alpha1.CloneSet
		old, cur   *corev1.Pod
		resize     bool
		wantIgnore bool
	}
	tests := map[string]tcase{
		"an annotation change of a ready pod is ignored": {
			old: eventPod(), cur: eventPod(withAnnotation("note", "x")), wantIgnore: true,
		},
		"a pod turning not ready is not ignored": {
			old: eventPod(), cur: eventPod(notReady),
		},
		"a new generation of the pod is not ignored": {
			old: eventPod(), cur: eventPod(func(p *corev1.Pod) { p.Generation = 2 }),
		},
		"a finalizer of the preDelete hook coming is not ignored": {
			cs: hooked, old: eventPod(), cur: eventPod(func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} }),
		},
		"another finalizer coming is ignored": {
			cs: hooked, old: eventPod(), cur: eventPod(func(p *corev1.Pod) { p.Finalizers = []string{"example.com/other"} }), wantIgnore: true,
		},
		"an in-place update that finished while the pod is still marked not ready for it is not ignored": {
			old: eventPod(), cur: eventPod(updatedInPlace(corev1.ConditionFalse)),
		},
		"a finished in-place update whose pod is marked ready again is ignored": {
			old: eventPod(), cur: eventPod(updatedInPlace(corev1.ConditionTrue)), wantIgnore: true,
		},
		"with in-place resize on, a finished in-place update is never ignored": {
			old: eventPod(), cur: eventPod(updatedInPlace(corev1.ConditionTrue)), resize: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		cs := tc.cs
		if cs == nil {
			cs = &appsv1alpha1.CloneSet{}
		}
		testkit.Diff(t, "ignored", tc.wantIgnore, ignorePodUpdate(cs, tc.old, tc.cur, tc.resize))
	})
}

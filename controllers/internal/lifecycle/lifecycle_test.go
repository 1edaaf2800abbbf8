package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestHooks(t *testing.T) {
	hook := &appspub.LifecycleHook{LabelsHandler: map[string]string{"hold": "true", "drain": "true"}, FinalizersHandler: []string{"example.com/x"}}
	pod := func(labels map[string]string, finalizers ...string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels, Finalizers: finalizers}}
	}
	type tcase struct {
		hook                *appspub.LifecycleHook
		pod                 *corev1.Pod
		wantHooked, wantAll bool
	}
	tests := map[string]tcase{
		"no hook holds nothing and is all hooked":   {pod: pod(nil), wantAll: true},
		"a pod without the handlers is not held":    {hook: hook, pod: pod(map[string]string{"a": "b"})},
		"one handler label holds the pod":           {hook: hook, pod: pod(map[string]string{"hold": "true"}), wantHooked: true},
		"a handler label with another value is not": {hook: hook, pod: pod(map[string]string{"hold": "false"})},
		"a handler finalizer holds the pod":         {hook: hook, pod: pod(nil, "example.com/x"), wantHooked: true},
		"every handler present is all hooked": {
			hook: hook, pod: pod(map[string]string{"hold": "true", "drain": "true"}, "example.com/x"),
			wantHooked: true, wantAll: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		if got := IsHooked(tc.hook, tc.pod); got != tc.wantHooked {
			t.Errorf("IsHooked() = %v, want %v", got, tc.wantHooked)
		}
		if got := IsAllHooked(tc.hook, tc.pod); got != tc.wantAll {
			t.Errorf("IsAllHooked() = %v, want %v", got, tc.wantAll)
		}
	})
}

func TestStateOfAPodWithoutTheLabelIsNormal(t *testing.T) {
	if got := State(&corev1.Pod{}); got != appspub.LifecycleStateNormal {
		t.Fatalf("State() = %q, want Normal", got)
	}
}

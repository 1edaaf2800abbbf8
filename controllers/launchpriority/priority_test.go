package launchpriority

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func pod(annotations map[string]string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: annotations}, Spec: corev1.PodSpec{Containers: containers}}
}

func c(name string, priority string) corev1.Container {
	out := corev1.Container{Name: name, Image: name}
	if priority != "" {
		out.Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: priority}}
	}
	return out
}

// keys returns each container's barrier key ("" for none).
func keys(p *corev1.Pod) []string {
	var out []string
	for i := range p.Spec.Containers {
		out = append(out, barrierKey(&p.Spec.Containers[i]))
	}
	return out
}

func TestAddBarriers(t *testing.T) {
	ordered := map[string]string{appspub.ContainerLaunchPriorityKey: appspub.ContainerLaunchOrdered}
	tests := []struct {
		name        string
		pod         *corev1.Pod
		wantChanged bool
		wantKeys    []string
		wantErr     bool
	}{
		{name: "Ordered gives the first container the highest priority",
			pod: pod(ordered, c("sidecar", ""), c("app", ""), c("tail", "")), wantChanged: true, wantKeys: []string{"p_0", "p_-1", "p_-2"}},
		{name: "KRUISE_CONTAINER_PRIORITY ranks containers, unset counting as 0",
			pod: pod(nil, c("app", ""), c("proxy", "100")), wantChanged: true, wantKeys: []string{"p_0", "p_100"}},
		{name: "equal priorities need no barrier",
			pod: pod(nil, c("a", "5"), c("b", "5")), wantKeys: []string{"", ""}},
		{name: "a pod of one container needs no barrier",
			pod: pod(ordered, c("app", "")), wantKeys: []string{""}},
		{name: "a pod asking for nothing gets nothing",
			pod: pod(nil, c("a", ""), c("b", "")), wantKeys: []string{"", ""}},
		{name: "a priority that is no integer refuses the pod",
			pod: pod(nil, c("a", "high"), c("b", "")), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed, err := AddBarriers(tt.pod)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if changed != tt.wantChanged {
				t.Errorf("changed %v, want %v", changed, tt.wantChanged)
			}
			testkit.Diff(t, "barrier keys", tt.wantKeys, keys(tt.pod))
			if changed {
				ref := tt.pod.Spec.Containers[0].Env[len(tt.pod.Spec.Containers[0].Env)-1].ValueFrom.ConfigMapKeyRef
				if ref.Name != "web-barrier" {
					t.Errorf("barrier ConfigMap %q, want web-barrier", ref.Name)
				}
			}
		})
	}
}

func TestNextKey(t *testing.T) {
	ordered := func(ready ...string) *corev1.Pod {
		p := pod(map[string]string{appspub.ContainerLaunchPriorityKey: appspub.ContainerLaunchOrdered}, c("a", ""), c("b", ""), c("c", ""))
		if _, err := AddBarriers(p); err != nil {
			t.Fatal(err)
		}
		for _, n := range ready {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: n, Ready: true})
		}
		return p
	}
	type tcase struct {
		pod      *corev1.Pod
		barrier  map[string]string
		wantKey  string
		wantDone bool
	}
	tests := map[string]tcase{
		"an empty barrier opens the highest priority first":                        {pod: ordered(), wantKey: "p_0"},
		"the next priority waits until the one before is ready":                    {pod: ordered(), barrier: map[string]string{"p_0": "true"}},
		"once the first container is ready the second's key is added":              {pod: ordered("a"), barrier: map[string]string{"p_0": "true"}, wantKey: "p_-1"},
		"once the second is ready the third's key is added":                        {pod: ordered("a", "b"), barrier: map[string]string{"p_0": "true", "p_-1": "true"}, wantKey: "p_-2"},
		"containers already ready without their keys get the next key, not a wait": {pod: ordered("a", "b", "c"), barrier: map[string]string{"p_0": "true"}, wantKey: "p_-1"},
		"every key present means done, even before the last container is ready":    {pod: ordered("a", "b"), barrier: map[string]string{"p_0": "true", "p_-1": "true", "p_-2": "true"}, wantDone: true},
		"every key present means done":                                             {pod: ordered("a", "b"), barrier: map[string]string{"p_0": "true", "p_-1": "true", "p_-2": "true"}, wantDone: true},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		key, done := nextKey(tt.pod, tt.barrier)
		if key != tt.wantKey || done != tt.wantDone {
			t.Errorf("nextKey = %q, %v; want %q, %v", key, done, tt.wantKey, tt.wantDone)
		}
	})
}

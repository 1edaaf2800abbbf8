package containermeta

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

func TestBuild(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}}}
	tests := []struct {
		name    string
		running map[string]*cri.Container
		want    appspub.RuntimeContainerMetaSet
	}{
		{
			name: "containers are listed in pod spec order with ID, restart count and hash",
			running: map[string]*cri.Container{
				"sidecar": {FullID: "containerd://b", RestartCount: 2, Hash: 7},
				"app":     {FullID: "containerd://a", RestartCount: 0, Hash: 9},
			},
			want: appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
				{Name: "app", ContainerID: "containerd://a", Hashes: appspub.RuntimeContainerHashes{PlainHash: 9, PlainHashWithoutResources: 9}},
				{Name: "sidecar", ContainerID: "containerd://b", RestartCount: 2, Hashes: appspub.RuntimeContainerHashes{PlainHash: 7, PlainHashWithoutResources: 7}},
			}},
		},
		{
			name:    "a spec container the runtime does not run is left out",
			running: map[string]*cri.Container{"app": {FullID: "containerd://a"}},
			want: appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
				{Name: "app", ContainerID: "containerd://a"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Build(pod, tt.running)); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}

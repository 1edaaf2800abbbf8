package facts

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
)

func TestCollect(t *testing.T) {
	kube := kubefake.NewClientset(
		&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "z1"}},
			Spec:       corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				NodeInfo:   corev1.NodeSystemInfo{ContainerRuntimeVersion: "docker://24.0.7"},
			},
		},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: ManagerDeployment, Namespace: "kruise-system"}},
	)
	for _, v := range []int{1, 2} {
		rel := &release.Release{Name: "kruise", Namespace: "default", Version: v, Info: &release.Info{Status: release.StatusDeployed},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: ChartName, Version: "1.8.0", AppVersion: "1.8.0"}}}
		if err := driver.NewSecrets(kube.CoreV1().Secrets("default")).Create(fmt.Sprintf("sh.helm.release.v1.kruise.v%d", v), rel); err != nil {
			t.Fatal(err)
		}
	}
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	crd := func(name string, annotations map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		}
	}
	md := metadatafake.NewSimpleMetadataClient(scheme,
		crd("clonesets.apps.kruise.io", map[string]string{AnnotationReleaseName: "kruise", AnnotationReleaseNamespace: "default"}),
		crd("widgets.example.com", nil),
		// Other products of the kruise API family are not ours.
		crd("rollouts.rollouts.kruise.io", nil),
		crd("gameserversets.game.kruise.io", map[string]string{AnnotationReleaseName: "kruise-game", AnnotationReleaseNamespace: "kruise-game-system"}),
	)
	got, err := Collect(context.Background(), Clients{Kube: kube, Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	got.ServerVersion = "" // the fake's own
	want := Facts{
		Nodes: []Node{{
			Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "z1"}, Zone: "z1",
			Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, Schedulable: false, Ready: true,
			ContainerRuntimeVersion: "docker://24.0.7",
		}},
		Releases: []Release{{Name: "kruise", Namespace: "default", Revision: 2, Status: "deployed", ChartVersion: "1.8.0", AppVersion: "1.8.0"}},
		CRDs:     []Object{{Name: "clonesets.apps.kruise.io", Owner: Owner{Release: "kruise", Namespace: "default"}}},
		Managers: []Object{{Name: ManagerDeployment, Namespace: "kruise-system"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}

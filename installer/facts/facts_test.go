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
	"k8s.io/apimachinery/pkg/api/resource"
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

func TestAddPodRequests(t *testing.T) {
	pod := func(namespace string, labels map[string]string, cpu, memory string, initCPU string) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
			}}}}},
		}
		if initCPU != "" {
			p.Spec.InitContainers = []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(initCPU)}}}}
		}
		return p
	}
	manager := map[string]string{ManagerPodLabel: ManagerPodLabelValue}
	cases := map[string]struct {
		pods          []*corev1.Pod
		wantRequested map[string]string
		wantManager   map[string]map[string]string
	}{
		"requests of the pods add up": {
			pods:          []*corev1.Pod{pod("a", nil, "100m", "1Gi", ""), pod("b", nil, "250m", "512Mi", "")},
			wantRequested: map[string]string{"cpu": "350m", "memory": "1536Mi"},
		},
		"an init container asking more than the containers counts as the scheduler counts it": {
			pods:          []*corev1.Pod{pod("a", nil, "100m", "1Gi", "2")},
			wantRequested: map[string]string{"cpu": "2", "memory": "1Gi"},
		},
		"manager pods are also kept apart by namespace": {
			pods:          []*corev1.Pod{pod("kruise-system", manager, "100m", "256Mi", ""), pod("other", manager, "500m", "1Gi", ""), pod("app", nil, "1", "1Gi", "")},
			wantRequested: map[string]string{"cpu": "1600m", "memory": "2304Mi"},
			wantManager:   map[string]map[string]string{"kruise-system": {"cpu": "100m", "memory": "256Mi"}, "other": {"cpu": "500m", "memory": "1Gi"}},
		},
	}
	asStrings := func(l corev1.ResourceList) map[string]string {
		out := map[string]string{}
		for k, v := range l {
			out[string(k)] = v.String()
		}
		return out
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := &Node{Name: "n1"}
			for _, p := range tc.pods {
				AddPodRequests(n, p)
			}
			if diff := cmp.Diff(tc.wantRequested, asStrings(n.Requested)); diff != "" {
				t.Errorf("requested (-want +got):\n%s", diff)
			}
			var gotManager map[string]map[string]string
			for ns, l := range n.ManagerRequested {
				if gotManager == nil {
					gotManager = map[string]map[string]string{}
				}
				gotManager[ns] = asStrings(l)
			}
			if diff := cmp.Diff(tc.wantManager, gotManager); diff != "" {
				t.Errorf("manager requested (-want +got):\n%s", diff)
			}
		})
	}
}

package builder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodBuilder(t *testing.T) {
	cases := map[string]struct {
		got  *corev1.Pod
		want func(*corev1.Pod)
	}{
		"a new pod has one main container on the default image": {
			got:  Pod("web-0", "ns").Obj(),
			want: func(p *corev1.Pod) {},
		},
		"setters chain and each sets its field": {
			got: Pod("web-0", "ns").Labels(map[string]string{"app": "web"}).Label("tier", "1").Image("nginx:1").
				Container("sidecar", "busybox:1").Node("n1").ReadinessGate("example.com/gate").
				TerminationGracePeriod(5).Obj(),
			want: func(p *corev1.Pod) {
				p.Labels = map[string]string{"app": "web", "tier": "1"}
				p.Spec.Containers = []corev1.Container{{Name: "main", Image: "nginx:1"}, {Name: "sidecar", Image: "busybox:1"}}
				p.Spec.NodeName = "n1"
				p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
				grace := int64(5)
				p.Spec.TerminationGracePeriodSeconds = &grace
			},
		},
		"Container with an existing name sets its image": {
			got: Pod("web-0", "ns").Container("main", "nginx:2").Obj(),
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = "nginx:2"
			},
		},
		"Condition adds a status condition once and then sets it": {
			got: Pod("web-0", "ns").Condition(corev1.PodReady, corev1.ConditionFalse).Condition(corev1.PodReady, corev1.ConditionTrue).Obj(),
			want: func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			},
		},
		"RequireNodeLabelIn adds one term per call": {
			got: Pod("web-0", "ns").RequireNodeLabelIn("zone", "a", "b").RequireNodeLabelIn("disk", "ssd").Obj(),
			want: func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}},
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}},
					}},
				}}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := &corev1.Pod{}
			want.APIVersion, want.Kind = "v1", "Pod"
			want.Name, want.Namespace = "web-0", "ns"
			want.Spec.Containers = []corev1.Container{{Name: "main", Image: DefaultImage}}
			tc.want(want)
			if d := cmp.Diff(want, tc.got); d != "" {
				t.Errorf("pod (-want +got):\n%s", d)
			}
		})
	}
}

func TestObjReturnsACopyAndMapsAreCopiedIn(t *testing.T) {
	labels := map[string]string{"app": "web"}
	b := Pod("web-0", "ns").Labels(labels)
	first := b.Obj()
	first.Labels["app"] = "changed"
	labels["app"] = "changed too"
	if got := b.Obj().Labels["app"]; got != "web" {
		t.Errorf("label app = %q after changing an earlier Obj and the caller's map, want web", got)
	}
}

func TestNodeBuilder(t *testing.T) {
	n := Node("n1").Zone("z1").Runtime("docker://24.0.7").Label("pool", "gpu").
		Taint("dedicated", "infra", corev1.TaintEffectNoSchedule).Obj()
	got := map[string]string{
		"zone":     n.Labels[corev1.LabelTopologyZone],
		"hostname": n.Labels[corev1.LabelHostname],
		"pool":     n.Labels["pool"],
		"runtime":  n.Status.NodeInfo.ContainerRuntimeVersion,
		"kubelet":  n.Status.NodeInfo.KubeletVersion,
		"ready":    string(n.Status.Conditions[0].Status),
		"pods":     n.Status.Allocatable.Pods().String(),
		"taint":    n.Spec.Taints[0].ToString(),
	}
	want := map[string]string{
		"zone": "z1", "hostname": "n1", "pool": "gpu", "runtime": "docker://24.0.7", "kubelet": DefaultKubeletVersion,
		"ready": "True", "pods": "110", "taint": "dedicated=infra:NoSchedule",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("node (-want +got):\n%s", d)
	}
	if c := Node("n2").NotReady().Obj().Status.Conditions[0]; c.Status != corev1.ConditionFalse {
		t.Errorf("NotReady: Ready = %s, want False", c.Status)
	}
}

func TestNamespaceBuilder(t *testing.T) {
	ns := Namespace("").GenerateName("it-").Label("control-plane", "openkruise").Obj()
	if ns.Name != "" || ns.GenerateName != "it-" || ns.Labels["control-plane"] != "openkruise" {
		t.Errorf("namespace = %+v", ns.ObjectMeta)
	}
}

func TestDeploymentBuilder(t *testing.T) {
	got := Deployment("web", "ns").Replicas(3).Image("nginx:1").Label("tier", "1").Obj()
	want := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"tier": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
			},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("deployment (-want +got):\n%s", d)
	}
}

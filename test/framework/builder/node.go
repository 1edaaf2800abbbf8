package builder

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of a new node builder, those of the kubelet the tests target; the framework fills
// the same into nodes built without them.
const (
	DefaultKubeletVersion = "v1.37.2"
	DefaultRuntime        = "containerd://1.7.13"
)

// NodeBuilder builds a Node.
type NodeBuilder struct {
	Meta[*NodeBuilder]
	node *corev1.Node
}

// Node starts a Ready linux/amd64 node as a v1.37.2 kubelet on containerd registers it, with 8
// CPUs, 32Gi of memory and room for 110 pods.
func Node(name string) *NodeBuilder {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	b := &NodeBuilder{node: &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname:   name,
			corev1.LabelOSStable:   "linux",
			corev1.LabelArchStable: "amd64",
		}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
			}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          DefaultKubeletVersion,
				ContainerRuntimeVersion: DefaultRuntime,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
			},
		},
	}}
	b.Meta = Meta[*NodeBuilder]{obj: &b.node.ObjectMeta, builder: b}
	return b
}

// Zone sets the topology.kubernetes.io/zone label.
func (b *NodeBuilder) Zone(zone string) *NodeBuilder {
	return b.Label(corev1.LabelTopologyZone, zone)
}

// Region sets the topology.kubernetes.io/region label.
func (b *NodeBuilder) Region(region string) *NodeBuilder {
	return b.Label(corev1.LabelTopologyRegion, region)
}

// Taint adds the taint key=value with effect.
func (b *NodeBuilder) Taint(key, value string, effect corev1.TaintEffect) *NodeBuilder {
	b.node.Spec.Taints = append(b.node.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// Unschedulable cordons the node.
func (b *NodeBuilder) Unschedulable() *NodeBuilder {
	b.node.Spec.Unschedulable = true
	return b
}

// Runtime sets status.nodeInfo.containerRuntimeVersion, e.g. "docker://24.0.7".
func (b *NodeBuilder) Runtime(version string) *NodeBuilder {
	b.node.Status.NodeInfo.ContainerRuntimeVersion = version
	return b
}

// KubeletVersion sets status.nodeInfo.kubeletVersion.
func (b *NodeBuilder) KubeletVersion(version string) *NodeBuilder {
	b.node.Status.NodeInfo.KubeletVersion = version
	return b
}

// Capacity sets capacity and allocatable to the same quantities, e.g. "4", "16Gi", 30.
func (b *NodeBuilder) Capacity(cpu, memory string, pods int64) *NodeBuilder {
	b.node.Status.Capacity = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	b.node.Status.Allocatable = b.node.Status.Capacity.DeepCopy()
	return b
}

// Allocatable sets what pods may use, below the capacity.
func (b *NodeBuilder) Allocatable(list corev1.ResourceList) *NodeBuilder {
	b.node.Status.Allocatable = list.DeepCopy()
	return b
}

// NotReady sets the Ready condition to False.
func (b *NodeBuilder) NotReady() *NodeBuilder {
	for i := range b.node.Status.Conditions {
		if b.node.Status.Conditions[i].Type == corev1.NodeReady {
			b.node.Status.Conditions[i].Status = corev1.ConditionFalse
			b.node.Status.Conditions[i].Reason = "KubeletNotReady"
			b.node.Status.Conditions[i].Message = ""
		}
	}
	return b
}

// Obj returns a copy of the node built so far.
func (b *NodeBuilder) Obj() *corev1.Node {
	return b.node.DeepCopy()
}

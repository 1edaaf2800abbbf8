package daemonset

import (
	"testing"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestWithoutTheVerticalScalingGateAResourcesChangeRecreatesThePods: this suite leaves
// InPlaceWorkloadVerticalScaling off, 1.8's default, so a change of cpu and memory requests and
// limits under an in-place strategy recreates every pod, as before the gate existed.
func TestWithoutTheVerticalScalingGateAResourcesChangeRecreatesThePods(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	to := builder.CPUMemory("150m", "64Mi", "200m", "256Mi")
	ds := kinds.DaemonSet("sized", ns).Image(imageV1).RollingUpdateType(appsv1alpha1.InplaceRollingUpdateType).Obj()
	ds.Spec.Template.Spec.Containers[0].Resources = builder.CPUMemory("100m", "64Mi", "200m", "128Mi")
	createDaemonSet(t, ds)
	before := framework.PodUIDs(waitRolledOut(t, ns, "sized", imageV1, nodes, framework.Medium))

	change(t, ns, "sized", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Resources = to })
	for _, p := range waitRolledOut(t, ns, "sized", imageV1, nodes, rollout) {
		if _, old := before[p.Name]; old {
			t.Errorf("pod %s survived a resources change with the gate off; it must be recreated", p.Name)
		}
		if !builder.HasCPUMemory(p.Spec.Containers[0], to) {
			t.Errorf("pod %s: resources %+v, want the new ones", p.Name, p.Spec.Containers[0].Resources)
		}
	}
}

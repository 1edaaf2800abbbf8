package cloneset

import (
	"testing"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestInPlaceUpdateToAnotherTagOfTheSameImageCompletes checks an in-place update to a tag that
// names the same image (the same image ID) completes once the container is recreated and the
// status shows the new tag: the pods become updated and ready again.
func TestInPlaceUpdateToAnotherTagOfTheSameImageCompletes(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).Image(imageV2).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 2, settle)
	before := framework.MustLivePods(t, env.Client, ns, "web")

	alias := imageV2 + framework.AliasTagSuffix
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = alias })
	waitSettledAt(t, ns, "web", 2, alias, settle)
	after := framework.MustLivePods(t, env.Client, ns, "web")
	for i := range after {
		if after[i].UID != before[0].UID && after[i].UID != before[1].UID {
			t.Errorf("pod %s was recreated; the update is in place", after[i].Name)
		}
	}
}

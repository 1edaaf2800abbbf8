package daemonset

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// holdFor is how long a test watches that a held-back creation stays held back.
const holdFor = 2 * time.Second

// TestProgressiveCreatePodCreatesOnlyWhatThePartitionLeaves: with the annotation
// daemonset.kruise.io/progressive-create-pod "true", a partition of 2 over the suite's four
// nodes creates pods on the first two nodes by name only; lowering the partition to 1 and then 0
// creates one more and then the last. Without the annotation (1.8's default) the same partition
// creates a pod on every node.
func TestProgressiveCreatePodCreatesOnlyWhatThePartitionLeaves(t *testing.T) {
	ns := newNamespace(t)
	nodes := baseNodeNames()
	ds := kinds.DaemonSet("progressive", ns).Image(imageV1).Partition(2).Obj()
	metav1.SetMetaDataAnnotation(&ds.ObjectMeta, appsv1alpha1.ProgressiveCreatePodAnnotation, "true")
	createDaemonSet(t, ds)
	createDaemonSet(t, kinds.DaemonSet("plain", ns).Image(imageV1).Partition(2).Obj())

	waitPodsOn(t, ns, "progressive", nodes[:2]...)
	holdsOn(t, ns, "progressive", nodes[:2])
	waitRolledOut(t, ns, "plain", imageV1, nodes, framework.Medium)

	setPartition := func(n int32) func(*appsv1alpha1.DaemonSet) {
		return func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(n) }
	}
	change(t, ns, "progressive", setPartition(1))
	waitPodsOn(t, ns, "progressive", nodes[:3]...)
	holdsOn(t, ns, "progressive", nodes[:3])
	change(t, ns, "progressive", setPartition(0))
	waitRolledOut(t, ns, "progressive", imageV1, nodes, framework.Medium)
}

// holdsOn checks, for holdFor, that the app's live pods stay on exactly nodes (sorted) and that
// the status counts every node as desired but only those as scheduled.
func holdsOn(t *testing.T, ns, app string, nodes []string) {
	t.Helper()
	framework.Consistently(t, holdFor, fmt.Sprintf("pods of %s stay on %v", app, nodes), func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, app)
		if err != nil {
			return err
		}
		on := slices.Sorted(maps.Keys(byNode(pods)))
		st := getDaemonSet(t, ns, app).Status
		if st.DesiredNumberScheduled != baseNodes || st.CurrentNumberScheduled != int32(len(nodes)) {
			return fmt.Errorf("status %+v, want %d desired and %d scheduled", st, baseNodes, len(nodes))
		}
		return framework.Want(len(pods) == len(nodes) && slices.Equal(on, nodes), fmt.Sprintf("pods on %v", on))
	})
}

package statefulset

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestOrderedReadyScaleDownKeepsPodsThatAreNotReady checks an OrderedReady scale to 0 of three
// pods that run but are not ready deletes none of them: a removed pod that is not ready goes
// only when it is the lowest such pod, and the highest goes first.
func TestOrderedReadyScaleDownKeepsPodsThatAreNotReady(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("stuck", ns, 3))
	waitSettled(t, ns, "stuck", framework.Long, "stuck-0", "stuck-1", "stuck-2")
	for _, p := range []string{"stuck-0", "stuck-1", "stuck-2"} {
		patchPodAnnotation(t, ns, p, framework.AnnotationNotReady, "true")
	}
	waitSet(t, ns, "stuck", framework.Medium, "the three pods not ready", func(set *appsv1beta1.StatefulSet) error {
		return framework.Want(set.Status.ReadyReplicas == 0, fmt.Sprintf("readyReplicas %d", set.Status.ReadyReplicas))
	})
	change(t, ns, "stuck", replicas(0))
	waitSet(t, ns, "stuck", framework.Medium, "the scale to 0 seen", func(set *appsv1beta1.StatefulSet) error {
		return framework.Want(set.Status.ObservedGeneration == set.Generation, "not observed yet")
	})
	framework.Consistently(t, 3*time.Second, "no pod deleted", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, "stuck", false)
		if err != nil {
			return err
		}
		got := strings.Join(names(pods), ",")
		return framework.Want(got == "stuck-0,stuck-1,stuck-2", "live pods "+got)
	})
}

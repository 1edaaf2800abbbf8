package cloneset

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// takeover is how long a standby may take to lead once the leader is gone.
const takeover = 60 * time.Second

// TestStandbyFinishesARolloutWhenTheLeaderDies stops the leading manager in the middle of a
// 20-pod recreate rollout; the standby takes the Lease over and finishes it, and at no time are
// there more pods than replicas plus maxSurge.
func TestStandbyFinishesARolloutWhenTheLeaderDies(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(20).Image(imageV1).UpdateType(appsv1alpha1.RecreateCloneSetUpdateStrategyType).
		MaxUnavailable(intstr.FromInt32(2)).MaxSurge(intstr.FromInt32(1)).
		// Slow pods make the rollout take many passes, so that the leader dies in the middle.
		TemplateAnnotation(framework.AnnotationReadyDelay, "1500ms").Obj())
	old := waitSettled(t, ns, "web", 20, rollout).Status.UpdateRevision

	first, err := harness.LeaseHolder(ctx, env.Client, managerNamespace)
	if err != nil || first == "" {
		t.Fatalf("no lease holder before the test: %q %v", first, err)
	}
	standby, err := startManager(ctx, "standby")
	if err != nil {
		t.Fatal(err)
	}
	handedOver := false
	t.Cleanup(func() {
		if !handedOver {
			standby.Stop()
		}
	})
	if err := standby.WaitReady(ctx, settle); err != nil {
		t.Fatal(err)
	}

	s := sample(ns, "web", 20)
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	framework.Eventually(t, rollout, "the rollout under way", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		if cs.Status.ObservedGeneration != cs.Generation || cs.Status.UpdateRevision == old || cs.Status.UpdatedReplicas < 4 {
			return fmt.Errorf("status %+v", cs.Status)
		}
		return nil
	})
	atStop := getCloneSet(t, ns, "web").Status
	primary.Stop()
	harness.WaitNewLeader(t, env.Client, managerNamespace, first, takeover)
	if atStop.UpdatedReadyReplicas >= 20 {
		t.Fatalf("the rollout finished before the leader was stopped; the test proves nothing: %+v", atStop)
	}
	t.Logf("leader stopped with %d of 20 pods updated and ready", atStop.UpdatedReadyReplicas)
	// The standby is also the webhook server from now on: the configurations follow it.
	primary, handedOver = standby, true
	waitSettledAt(t, ns, "web", 20, imageV2, rollout)
	_, maxTotal, samples := s.finish()
	t.Logf("%d samples, at most %d pods", samples, maxTotal)
	if maxTotal > 21 {
		t.Fatalf("%d pods at once during the takeover, want at most replicas + maxSurge = 21", maxTotal)
	}
}

package installer

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// Preflight counts what the pods on the chosen nodes request: a node that matches but whose
// room (allocatable minus those requests) cannot hold the manager's requests is refused, with
// the request and the node's room named.
func TestPreflightCountsTheRoomLeftOnNodes(t *testing.T) {
	ctx := context.Background()
	i, _ := newInstaller(t)
	o := installer.Options{Namespace: "kruise-room", Placement: &placement.Options{Nodes: []string{"b2"}}, Set: testSet()}
	placementVerdict := func(t *testing.T) preflight.Verdict {
		t.Helper()
		res, err := i.Preflight(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Report.Verdicts {
			if v.Check == preflight.CheckPlacement {
				return v
			}
		}
		t.Fatalf("no placement verdict in %+v", res.Report.Verdicts)
		return preflight.Verdict{}
	}
	if v := placementVerdict(t); v.Severity != preflight.OK {
		t.Fatalf("before any pod takes room: %+v", v)
	}

	// b2 has 8 CPUs and 32Gi; this pod leaves it 50m of CPU, less than the small spec's 100m.
	ns := framework.NewNamespace(t, env.Client, "room-", nil)
	hog := builder.Pod("hog", ns).Container("main", "busybox").Node("b2").TerminationGracePeriod(0).Obj()
	hog.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7950m"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	framework.Create(t, env.Client, hog)

	v := placementVerdict(t)
	if diff := cmp.Diff(preflight.Refused, v.Severity); diff != "" {
		t.Errorf("placement severity (-want +got):\n%s", diff)
	}
	if missing := testkit.Missing(v.Message, "the manager requests cpu 100m, memory 256Mi per replica", "room for 0 of its 1 replica(s)",
		"the roomiest, b2, has cpu 50m,", "(allocatable minus the requests of the pods on it)"); missing != nil {
		t.Errorf("placement message %q lacks %q", v.Message, missing)
	}
	if missing := testkit.Missing(v.Fix, "--cpu-request"); missing != nil {
		t.Errorf("fix %q lacks %q", v.Fix, missing)
	}
	if err := env.Client.Delete(ctx, hog); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.Medium, "the room comes back once the pod is gone", func(ctx context.Context) error {
		v := placementVerdict(t)
		return framework.Want(v.Severity == preflight.OK, v.Message)
	})
}

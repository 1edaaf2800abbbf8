package uniteddeployment

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// settle bounds a UnitedDeployment reaching a new spread or rollout of a handful of pods,
// through two controllers, the scheduler and the node simulator.
const settle = 2 * time.Minute

const (
	imageV1 = "registry.example.com/web:1"
	imageV2 = "registry.example.com/web:2"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "ud-", nil)
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func getUD(ctx context.Context, ns, name string) (*appsv1alpha1.UnitedDeployment, error) {
	ud := &appsv1alpha1.UnitedDeployment{}
	return ud, env.Client.Get(ctx, key(ns, name), ud)
}

// updateUD changes the UnitedDeployment with change, retrying on conflicts.
func updateUD(t *testing.T, ns, name string, change func(*appsv1alpha1.UnitedDeployment)) {
	t.Helper()
	framework.Change(t, env.Client, key(ns, name), change)
}

// podsBySubset returns the live pods of app by their subset label.
func podsBySubset(ctx context.Context, ns, app string) (map[string][]corev1.Pod, error) {
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	out := map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out[p.Labels[appsv1alpha1.SubSetNameLabelKey]] = append(out[p.Labels[appsv1alpha1.SubSetNameLabelKey]], p)
		}
	}
	return out, nil
}

// zoneOf returns the zone label of the named node.
func zoneOf(ctx context.Context, node string) (string, error) {
	n := &corev1.Node{}
	if err := env.Client.Get(ctx, key("", node), n); err != nil {
		return "", err
	}
	return n.Labels[corev1.LabelTopologyZone], nil
}

// spread checks that app runs exactly want ready pods per subset, each on a node of the zone
// its subset is named after, and that the status says so.
func spread(ctx context.Context, ns, name string, want map[string]int32) error {
	ud, err := getUD(ctx, ns, name)
	if err != nil {
		return err
	}
	var total int32
	for _, n := range want {
		total += n
	}
	if ud.Status.ObservedGeneration != ud.Generation || ud.Status.ReadyReplicas != total || ud.Status.Replicas != total {
		return fmt.Errorf("status observedGeneration %d (generation %d), replicas %d, ready %d; want %d ready",
			ud.Status.ObservedGeneration, ud.Generation, ud.Status.Replicas, ud.Status.ReadyReplicas, total)
	}
	if d := cmp.Diff(want, ud.Status.SubsetReplicas); d != "" {
		return fmt.Errorf("status.subsetReplicas (-want +got):\n%s", d)
	}
	pods, err := podsBySubset(ctx, ns, name)
	if err != nil {
		return err
	}
	got := map[string]int32{}
	for subset, ps := range pods {
		for i := range ps {
			p := &ps[i]
			if !framework.PodReady(p) {
				return fmt.Errorf("pod %s of subset %s not ready yet", p.Name, subset)
			}
			zone, err := zoneOf(ctx, p.Spec.NodeName)
			if err != nil {
				return err
			}
			if zone != subset {
				return fmt.Errorf("pod %s of subset %s runs on node %s in zone %q", p.Name, subset, p.Spec.NodeName, zone)
			}
			got[subset]++
		}
	}
	for subset, n := range want {
		if n == 0 {
			if _, ok := got[subset]; !ok {
				got[subset] = 0
			}
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		return fmt.Errorf("ready pods per subset (-want +got):\n%s", d)
	}
	return nil
}

// waitSpread waits until spread holds.
func waitSpread(t *testing.T, ns, name string, want map[string]int32) {
	t.Helper()
	framework.Eventually(t, settle, fmt.Sprintf("UnitedDeployment %s runs %v", name, want), func(ctx context.Context) error {
		return spread(ctx, ns, name, want)
	})
}

// waitRolledOut waits until every pod of the UnitedDeployment is at its update revision and
// ready, and the status says the rollout is done.
func waitRolledOut(t *testing.T, ns, name string, total int32) *appsv1alpha1.UnitedDeployment {
	t.Helper()
	return framework.WaitFor(t, env.Client, key(ns, name), settle, "the rollout of "+name+" finishes", func(ud *appsv1alpha1.UnitedDeployment) error {
		st := ud.Status
		if st.ObservedGeneration != ud.Generation || st.UpdateStatus == nil || st.CurrentRevision != st.UpdateStatus.UpdatedRevision ||
			st.Replicas != total || st.UpdatedReplicas != total || st.ReadyReplicas != total || st.UpdatedReadyReplicas != total {
			return fmt.Errorf("status %+v at generation %d", st, ud.Generation)
		}
		return nil
	})
}

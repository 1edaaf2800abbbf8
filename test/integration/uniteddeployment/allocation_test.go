package uniteddeployment

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestFixedAllocationPlacesEachSubsetInItsZoneAndScalesWithTheAllocator(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.UnitedDeployment("web", ns).Replicas(6).Image(imageV1).
		Zones(zoneA, zoneB, zoneC).SubsetReplicas(zoneA, "50%").Obj())
	// zone-a takes half; the other three are split over zone-b and zone-c, the extra one to the
	// later name.
	waitSpread(t, ns, "web", map[string]int32{zoneA: 3, zoneB: 1, zoneC: 2})

	// One CloneSet per subset, named, labelled and owned as in 1.8.
	var sets appsv1alpha1.CloneSetList
	if err := env.Client.List(ctx, &sets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	ud, err := getUD(ctx, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cs := range sets.Items {
		subset := cs.Labels[appsv1alpha1.SubSetNameLabelKey]
		owner := metav1.GetControllerOf(&cs)
		switch {
		case !strings.HasPrefix(cs.Name, "web-"+subset+"-"):
			t.Errorf("CloneSet %s of subset %s is not named web-%s-<suffix>", cs.Name, subset, subset)
		case owner == nil || owner.UID != ud.UID:
			t.Errorf("CloneSet %s is not controlled by the UnitedDeployment: %+v", cs.Name, cs.OwnerReferences)
		case cs.Labels[appsv1alpha1.ControllerRevisionHashLabelKey] != ud.Status.UpdateStatus.UpdatedRevision:
			t.Errorf("CloneSet %s revision label %q, want %q", cs.Name, cs.Labels[appsv1alpha1.ControllerRevisionHashLabelKey], ud.Status.UpdateStatus.UpdatedRevision)
		case cs.Spec.Selector.MatchLabels[appsv1alpha1.SubSetNameLabelKey] != subset:
			t.Errorf("CloneSet %s selector %v does not pick its subset", cs.Name, cs.Spec.Selector)
		}
		got = append(got, subset)
	}
	sort.Strings(got)
	if d := cmp.Diff([]string{zoneA, zoneB, zoneC}, got); d != "" {
		t.Errorf("subset CloneSets (-want +got):\n%s", d)
	}
	// The status a user or a tool reads.
	st := ud.Status
	if st.LabelSelector != "app=web" || st.UpdateStatus.CurrentPartitions[zoneA] != 0 || len(st.SubsetStatuses) != 3 {
		t.Errorf("status labelSelector %q, updateStatus %+v, subsetStatuses %+v", st.LabelSelector, st.UpdateStatus, st.SubsetStatuses)
	}
	for _, c := range []appsv1alpha1.UnitedDeploymentConditionType{appsv1alpha1.SubsetProvisioned, appsv1alpha1.SubsetUpdated} {
		if cond := condition(st, c); cond == nil || cond.Status != "True" {
			t.Errorf("condition %s = %+v, want True", c, cond)
		}
	}

	// kubectl scale and kubectl get ud, with the 1.8 columns.
	if _, stderr, err := env.Kubectl(ctx, "-n", ns, "scale", "ud/web", "--replicas=10"); err != nil {
		t.Fatalf("kubectl scale: %v: %s", err, stderr)
	}
	waitSpread(t, ns, "web", map[string]int32{zoneA: 5, zoneB: 2, zoneC: 3})
	out, stderr, err := env.Kubectl(ctx, "-n", ns, "get", "ud", "web")
	if err != nil {
		t.Fatalf("kubectl get ud: %v: %s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "NAME DESIRED CURRENT UPDATED READY AGE" {
		t.Errorf("kubectl get ud header %q, want NAME DESIRED CURRENT UPDATED READY AGE", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) < 5 || strings.Join(f[:5], " ") != "web 10 10 10 10" {
		t.Errorf("kubectl get ud row %q, want web 10 10 10 10 <age>", lines[1])
	}

	// Scaling down follows the allocator too: zone-a keeps half.
	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Replicas = ptr.To[int32](2) })
	waitSpread(t, ns, "web", map[string]int32{zoneA: 1, zoneB: 0, zoneC: 1})
}

func TestElasticAllocationFillsMinimumsThenMaximumsInSubsetOrder(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.UnitedDeployment("web", ns).Replicas(7).Image(imageV1).
		Zones(zoneA, zoneB, zoneC).SubsetBounds(zoneA, "1", "2").SubsetBounds(zoneB, "1", "2").Obj())
	waitSpread(t, ns, "web", map[string]int32{zoneA: 2, zoneB: 2, zoneC: 3})

	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Replicas = ptr.To[int32](3) })
	// Minimums first (1, 1, 0 as defaulted), then zone-a up to its maximum.
	waitSpread(t, ns, "web", map[string]int32{zoneA: 2, zoneB: 1, zoneC: 0})

	updateUD(t, ns, "web", func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Replicas = ptr.To[int32](9) })
	waitSpread(t, ns, "web", map[string]int32{zoneA: 2, zoneB: 2, zoneC: 5})
}

// condition returns the UnitedDeployment condition of type t, or nil.
func condition(st appsv1alpha1.UnitedDeploymentStatus, t appsv1alpha1.UnitedDeploymentConditionType) *appsv1alpha1.UnitedDeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// subsetSchedulable reads the UnitedDeployment name and returns the Schedulable condition of
// its subset, or an error.
func subsetSchedulable(ctx context.Context, ns, name, subset string) (*appsv1alpha1.UnitedDeploymentSubsetCondition, error) {
	ud, err := getUD(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	s := ud.Status.GetSubsetStatus(subset)
	if s == nil {
		return nil, fmt.Errorf("no subset status for %s in %+v", subset, ud.Status.SubsetStatuses)
	}
	return s.GetCondition(appsv1alpha1.UnitedDeploymentSubsetSchedulable), nil
}

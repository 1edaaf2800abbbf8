package sidecarset

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// upgradableCondition is the pod's SidecarSetUpgradable condition, or nil.
func upgradableCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == appsv1alpha1.SidecarSetUpgradable {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestSidecarSetUpgradableWrittenOnlyWhere18WritesIt checks the SidecarSet controller writes a
// pod's SidecarSetUpgradable condition only where 1.8 does: a pod created with the latest
// sidecars of two SidecarSets gets no condition and no status write from the controller, even
// when both SidecarSets are reconciled again; once one SidecarSet updates the pod's sidecar in
// place, the condition holds that SidecarSet's entry, true, and only it.
func TestSidecarSetUpgradableWrittenOnlyWhere18WritesIt(t *testing.T) {
	ns := newNamespace(t)
	sets := []string{"cond-agent", "cond-proxy"}
	createSidecarSet(t, agentSet(sets[0], ns))
	createSidecarSet(t, sidecarSetIn(sets[1], ns, corev1.Container{Name: "proxy", Image: "proxy:1"}))
	createPods(t, ns, 1)
	for _, name := range sets {
		waitStatus(t, name, "the pod matched, updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
			return st.MatchedPods == 1 && st.UpdatedPods == 1 && st.ReadyPods == 1
		})
	}
	created := getPod(t, ns, "web-0")
	if c := upgradableCondition(created); c != nil {
		t.Fatalf("a pod created with the latest sidecars got a SidecarSetUpgradable condition: %+v", *c)
	}

	// A custom version label reconciles each SidecarSet again without changing its sidecars;
	// its revision carries the label once the pass has run.
	for _, name := range sets {
		updateSidecarSet(t, name, func(s *appsv1alpha1.SidecarSet) {
			if s.Labels == nil {
				s.Labels = map[string]string{}
			}
			s.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] = "v2"
		})
		waitStatus(t, name, "the custom version on the latest revision", func(st appsv1alpha1.SidecarSetStatus) bool {
			var rev appsv1.ControllerRevision
			key := types.NamespacedName{Namespace: harness.ManagerNamespace, Name: st.LatestRevision}
			err := env.Client.Get(context.Background(), key, &rev)
			return err == nil && rev.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] == "v2"
		})
	}
	framework.Consistently(t, 2*time.Second, "no status write to a pod on the latest sidecars", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		p := pods["web-0"]
		if c := upgradableCondition(p); c != nil {
			return fmt.Errorf("condition %+v", *c)
		}
		return framework.Want(p.ResourceVersion == created.ResourceVersion,
			fmt.Sprintf("resourceVersion %s, was %s", p.ResourceVersion, created.ResourceVersion))
	})

	updateSidecarSet(t, sets[0], func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "agent:2" })
	waitSidecarImage(t, ns, "agent", "agent:2", "web-0")
	framework.Eventually(t, framework.Medium, "the updating SidecarSet's entry true", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		c := upgradableCondition(pods["web-0"])
		want := `{"cond-agent":true}`
		return framework.Want(c != nil && c.Status == corev1.ConditionTrue && c.Reason == "AllSidecarsetUpgradable" && c.Message == want,
			fmt.Sprintf("condition %+v, want True AllSidecarsetUpgradable %s", c, want))
	})
}

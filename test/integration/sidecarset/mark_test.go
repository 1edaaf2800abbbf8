package sidecarset

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/controllers/sidecarset"
)

// statusPatches counts the pod status patches sent through its client and the 409s they got.
type statusPatches struct {
	sent, conflicts atomic.Int32
}

// client is a client of the test's apiserver with its status patches counted.
func (s *statusPatches) client(t *testing.T) client.Client {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if sub == "status" {
				s.sent.Add(1)
				if apierrors.IsConflict(err) {
					s.conflicts.Add(1)
				}
			}
			return err
		},
	})
}

// upgradableEntries reads the SidecarSet name → upgradable map of the pod's condition.
func upgradableEntries(t *testing.T, p *corev1.Pod) map[string]bool {
	t.Helper()
	c := upgradableCondition(p)
	if c == nil {
		t.Fatalf("pod %s has no SidecarSetUpgradable condition", p.Name)
	}
	entries := map[string]bool{}
	if err := json.Unmarshal([]byte(c.Message), &entries); err != nil {
		t.Fatalf("SidecarSetUpgradable message %q: %v", c.Message, err)
	}
	return entries
}

// Eight SidecarSets mark one pod at once, each from the same copy read before any of them
// wrote: the marks carry no resourceVersion, yet every SidecarSet's entry is kept, since the
// marks of a pod are serialised and each starts from the condition the one before wrote.
func TestSidecarSetsMarkingOnePodAtOnceAllKeepTheirEntry(t *testing.T) {
	ns := newNamespace(t)
	createPods(t, ns, 1)
	held := getPod(t, ns, "web-0")
	marks := sidecarset.NewMarks(env.Client, clock.RealClock{})

	want := map[string]bool{}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		name := fmt.Sprintf("set-%d", i)
		ok := i%2 == 0
		want[name] = ok
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = marks.Mark(context.Background(), held, name, ok)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("mark of set-%d: %v", i, err)
		}
	}
	got := upgradableEntries(t, getPod(t, ns, "web-0"))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
}

// The kubelet writes the pod's status between a SidecarSet's in-place update and its mark, so
// the copy the mark starts from (the update's response) is stale: the mark is still one status
// patch with no conflict, and it keeps both the kubelet's status and the entry.
func TestMarkAfterTheKubeletWroteThePodStatusIsOnePatchWithoutConflict(t *testing.T) {
	ns := newNamespace(t)
	createPods(t, ns, 1)
	held := getPod(t, ns, "web-0")

	const kubeletCondition corev1.PodConditionType = "example.com/KubeletProbe"
	kubelet := held.DeepCopy()
	kubelet.Status.Conditions = append(kubelet.Status.Conditions, corev1.PodCondition{Type: kubeletCondition, Status: corev1.ConditionTrue})
	if err := env.Client.Status().Update(context.Background(), kubelet); err != nil {
		t.Fatalf("the kubelet's status write: %v", err)
	}

	var patches statusPatches
	marks := sidecarset.NewMarks(patches.client(t), clock.RealClock{})
	if err := marks.Mark(context.Background(), held, "agent", true); err != nil {
		t.Fatalf("mark: %v", err)
	}
	if sent, conflicts := patches.sent.Load(), patches.conflicts.Load(); sent != 1 || conflicts != 0 {
		t.Fatalf("%d status patches with %d conflicts, want 1 with none", sent, conflicts)
	}
	p := getPod(t, ns, "web-0")
	kept := false
	for _, c := range p.Status.Conditions {
		kept = kept || (c.Type == kubeletCondition && c.Status == corev1.ConditionTrue)
	}
	if !kept {
		t.Fatalf("the kubelet's condition %s was lost: %+v", kubeletCondition, p.Status.Conditions)
	}
	if got := upgradableEntries(t, p); fmt.Sprint(got) != fmt.Sprint(map[string]bool{"agent": true}) {
		t.Fatalf("entries %v, want agent: true", got)
	}
}

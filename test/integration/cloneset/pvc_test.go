package cloneset

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func claimNames(t *testing.T, ns string) []string {
	t.Helper()
	claims, err := framework.LiveClaims(context.Background(), env.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range claims {
		out = append(out, c.Name)
	}
	return out
}

func TestVolumeClaimTemplatesAreReusedByInstanceID(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).VolumeClaimTemplate("data", "1Gi").Obj())
	waitSettled(t, ns, "web", 2, settle)

	var want []string
	ids := map[string]bool{}
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		id := p.Labels[appsv1alpha1.CloneSetInstanceID]
		ids[id] = true
		want = append(want, "data-web-"+id)
		var claim string
		for _, v := range p.Spec.Volumes {
			if v.Name == "data" && v.PersistentVolumeClaim != nil {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
		if claim != "data-web-"+id {
			t.Errorf("pod %s mounts claim %q, want data-web-%s", p.Name, claim, id)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, claimNames(t, ns)); diff != "" {
		t.Fatalf("claims (-want +got):\n%s", diff)
	}

	// A recreate update replaces the pods; the new ones take the old instance IDs and claims.
	change(t, ns, "web", withEnv("V", "2"))
	framework.WaitForPods(t, env.Client, ns, "web", settle, "pods recreated on the same instance IDs", func(pods []corev1.Pod) error {
		if len(pods) != 2 {
			return fmt.Errorf("%d pods", len(pods))
		}
		for _, p := range pods {
			if len(p.Spec.Containers[0].Env) == 0 {
				return fmt.Errorf("pod %s not recreated yet", p.Name)
			}
			if !ids[p.Labels[appsv1alpha1.CloneSetInstanceID]] {
				return fmt.Errorf("pod %s has a new instance ID", p.Name)
			}
		}
		return nil
	})
	waitSettled(t, ns, "web", 2, settle)
	if diff := cmp.Diff(want, claimNames(t, ns)); diff != "" {
		t.Fatalf("claims after the recreate (-want +got):\n%s", diff)
	}

	// Scaling down removes the pod and its claim.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](1) })
	waitSettled(t, ns, "web", 1, settle)
	left := framework.MustLivePods(t, env.Client, ns, "web")[0]
	framework.Eventually(t, settle, "the removed pod's claim is deleted", func(ctx context.Context) error {
		if got := claimNames(t, ns); !cmp.Equal(got, []string{"data-web-" + left.Labels[appsv1alpha1.CloneSetInstanceID]}) {
			return fmt.Errorf("claims %v", got)
		}
		return nil
	})
}

// claimOf returns the claim a pod mounts as volume name, or "".
func claimOf(p *corev1.Pod, name string) string {
	for _, v := range p.Spec.Volumes {
		if v.Name == name && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

func TestRecreateHeldByPreDeleteKeepsThePodsVolume(t *testing.T) {
	ns := newNamespace(t)
	old := createOne(t, kinds.CloneSet("web", ns).Replicas(1).VolumeClaimTemplate("data", "1Gi").
		TemplateLabel("hold", "true").PreDeleteHook("hold", "true").Obj())
	id := old.Labels[appsv1alpha1.CloneSetInstanceID]
	claim := &corev1.PersistentVolumeClaim{}
	if err := env.Client.Get(context.Background(), clientKey(ns, "data-web-"+id), claim); err != nil {
		t.Fatalf("claim of pod %s: %v", old.Name, err)
	}

	// An env change cannot go in place: the pod is recreated, and the preDelete hook holds it.
	change(t, ns, "web", withEnv("V", "2"))
	framework.Eventually(t, framework.Medium, "the old pod held in PreparingDelete", func(ctx context.Context) error {
		p, err := keptPod(ctx, t, ns, old, " while the preDelete hook held it")
		if err != nil {
			return err
		}
		return framework.Want(state(p) == appspub.LifecycleStatePreparingDelete, fmt.Sprintf("pod %s in state %q", p.Name, state(p)))
	})
	// A spec change that touches no pod makes the controller run one whole pass more, with the
	// pod held, before it writes the new observedGeneration; a replacement beside the held pod
	// would be created in that pass at the latest.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.RevisionHistoryLimit = ptr.To[int32](5) })
	framework.Eventually(t, framework.Medium, "the controller saw the spec change with the pod held", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		return framework.Want(cs.Status.ObservedGeneration == cs.Generation, fmt.Sprintf("observedGeneration %d, generation %d", cs.Status.ObservedGeneration, cs.Generation))
	})
	if pods := framework.MustLivePods(t, env.Client, ns, "web"); len(pods) != 1 || pods[0].UID != old.UID {
		var names []string
		for _, p := range pods {
			names = append(names, p.Name)
		}
		t.Fatalf("live pods %v while the hook holds %s; a replacement beside it would take a new instance ID and the claim would be lost", names, old.Name)
	}

	// The operator removes the hook's label.
	framework.MergePatch(t, env.Client, podRef(ns, old.Name), `{"metadata":{"labels":{"hold":null}}}`)
	framework.WaitForPods(t, env.Client, ns, "web", framework.Long, "a new pod on the old instance ID, mounting the same claim", func(pods []corev1.Pod) error {
		if len(pods) != 1 {
			return fmt.Errorf("%d live pods", len(pods))
		}
		p := pods[0]
		switch {
		case p.UID == old.UID:
			return fmt.Errorf("pod %s not recreated yet, in state %q", p.Name, state(&p))
		case p.Labels[appsv1alpha1.CloneSetInstanceID] != id:
			t.Fatalf("pod %s has instance ID %q, want the old pod's %q", p.Name, p.Labels[appsv1alpha1.CloneSetInstanceID], id)
		case claimOf(&p, "data") != claim.Name:
			t.Fatalf("pod %s mounts claim %q, want %q", p.Name, claimOf(&p, "data"), claim.Name)
		}
		return nil
	})
	cs := waitSettled(t, ns, "web", 1, settle)
	p := framework.MustLivePods(t, env.Client, ns, "web")[0]
	if p.Labels["controller-revision-hash"] != cs.Status.UpdateRevision || len(p.Spec.Containers[0].Env) == 0 {
		t.Fatalf("pod %s is not at the update revision %s", p.Name, cs.Status.UpdateRevision)
	}
	got := &corev1.PersistentVolumeClaim{}
	if err := env.Client.Get(context.Background(), clientKey(ns, claim.Name), got); err != nil {
		t.Fatalf("claim %s after the recreate: %v", claim.Name, err)
	}
	if got.UID != claim.UID || got.DeletionTimestamp != nil {
		t.Fatalf("claim %s is a new one or being deleted (UID %s, was %s; deletionTimestamp %v): the pod's data is lost", claim.Name, got.UID, claim.UID, got.DeletionTimestamp)
	}
}

func TestRecreateHeldByPreDeleteWithDisablePVCReuseGetsNewClaims(t *testing.T) {
	ns := newNamespace(t)
	cs := kinds.CloneSet("web", ns).Replicas(1).VolumeClaimTemplate("data", "1Gi").
		TemplateLabel("hold", "true").PreDeleteHook("hold", "true").Obj()
	cs.Spec.ScaleStrategy.DisablePVCReuse = true
	old := createOne(t, cs)
	oldClaim := "data-web-" + old.Labels[appsv1alpha1.CloneSetInstanceID]

	change(t, ns, "web", withEnv("V", "2"))
	framework.Eventually(t, framework.Medium, "the held pod in PreparingDelete, still the one replica", func(ctx context.Context) error {
		p, err := keptPod(ctx, t, ns, old, " while the preDelete hook held it")
		if err != nil {
			return err
		}
		pods, err := framework.LivePods(ctx, env.Client, ns, "web")
		if err != nil {
			return err
		}
		return framework.Want(state(p) == appspub.LifecycleStatePreparingDelete && len(pods) == 1,
			fmt.Sprintf("pod %s in state %q, %d live pods", p.Name, state(p), len(pods)))
	})

	framework.MergePatch(t, env.Client, podRef(ns, old.Name), `{"metadata":{"labels":{"hold":null}}}`)
	waitSettled(t, ns, "web", 1, settle)
	p := framework.MustLivePods(t, env.Client, ns, "web")[0]
	newClaim := "data-web-" + p.Labels[appsv1alpha1.CloneSetInstanceID]
	if p.Labels[appsv1alpha1.CloneSetInstanceID] == old.Labels[appsv1alpha1.CloneSetInstanceID] || claimOf(&p, "data") != newClaim {
		t.Fatalf("pod %s on instance ID %q mounting %q; with disablePVCReuse it gets a new ID and claim", p.Name, p.Labels[appsv1alpha1.CloneSetInstanceID], claimOf(&p, "data"))
	}
	framework.Eventually(t, framework.Medium, "only the new pod's claim is left", func(ctx context.Context) error {
		got := claimNames(t, ns)
		return framework.Want(cmp.Equal(got, []string{newClaim}), fmt.Sprintf("claims %v, want [%s] (the old %s removed)", got, newClaim, oldClaim))
	})
}

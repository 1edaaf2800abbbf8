package persistentpodstate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

const (
	zoneKey = corev1.LabelTopologyZone
	hostKey = corev1.LabelHostname
	// ipKey stands for an annotation an IPAM writes on a running pod.
	ipKey = "ipam.example.com/fixed-ip"
)

// zoneOfNode is the zone setUp gave each node.
func zoneOfNode(node string) string {
	var i int
	if _, err := fmt.Sscanf(node, "node-%d", &i); err != nil {
		return ""
	}
	return zones[i%3]
}

func getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	return pod, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)
}

// readyPod waits until pod name of ns runs Ready on a node, not being deleted, with a UID other
// than notUID, and returns it.
func readyPod(t *testing.T, ns, name string, notUID types.UID) *corev1.Pod {
	t.Helper()
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, framework.Medium, "pod "+name+" Ready on a node", func(pod *corev1.Pod) error {
		return framework.Want(pod.UID != notUID && pod.DeletionTimestamp == nil && pod.Spec.NodeName != "" && framework.PodReady(pod),
			fmt.Sprintf("pod %s on %q ready %v", pod.UID, pod.Spec.NodeName, framework.PodReady(pod)))
	})
}

// statesAre waits until the PersistentPodState's podStates satisfy check, and returns them.
// generatingSet is an Advanced StatefulSet whose annotations ask for a generated
// PersistentPodState that keeps each pod's zone.
func generatingSet(name, ns string, replicas int32) *appsv1beta1.StatefulSet {
	sts := kinds.StatefulSet(name, ns).Replicas(replicas).Obj()
	sts.Annotations = map[string]string{
		appsv1alpha1.AnnotationAutoGeneratePersistentPodState: "true",
		appsv1alpha1.AnnotationRequiredPersistentTopology:     zoneKey,
	}
	return sts
}

func statesAre(t *testing.T, ns, name, what string, check func(map[string]appsv1alpha1.PodState) error) map[string]appsv1alpha1.PodState {
	t.Helper()
	pps := &appsv1alpha1.PersistentPodState{}
	framework.Eventually(t, framework.Medium, what, func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pps); err != nil {
			return err
		}
		if pps.Status.ObservedGeneration != pps.Generation {
			return fmt.Errorf("status at generation %d of %d", pps.Status.ObservedGeneration, pps.Generation)
		}
		return check(pps.Status.PodStates)
	})
	return pps.Status.PodStates
}

// deleteAndWaitForReplacement deletes pod name and returns its replacement once Ready.
func deleteAndWaitForReplacement(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	old, err := getPod(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	framework.Delete(t, env.Client, old)
	return readyPod(t, ns, name, old.UID)
}

func TestRecreatedPodKeepsItsZoneAndAnnotations(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pps-", nil)
	framework.Create(t, env.Client, kinds.PersistentPodState("db", ns, "db").Required(zoneKey).Preferred(50, hostKey).Annotations(ipKey).Obj())
	framework.Create(t, env.Client, kinds.StatefulSet("db", ns).Replicas(3).Obj())

	before := readyPod(t, ns, "db-1", "")
	zone := zoneOfNode(before.Spec.NodeName)
	// An IPAM gives the running pod its address; the state records it.
	framework.Eventually(t, framework.Short, "the pod annotated", func(ctx context.Context) error {
		pod, err := getPod(ctx, ns, "db-1")
		if err != nil {
			return err
		}
		patch := client.MergeFrom(pod.DeepCopy())
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[ipKey] = "10.1.2.3"
		return env.Client.Patch(ctx, pod, patch)
	})
	statesAre(t, ns, "db", "db-1's node, zone and address recorded", func(s map[string]appsv1alpha1.PodState) error {
		got := s["db-1"]
		return framework.Want(got.NodeName == before.Spec.NodeName && got.NodeTopologyLabels[zoneKey] == zone &&
			got.NodeTopologyLabels[hostKey] == before.Spec.NodeName && got.Annotations[ipKey] == "10.1.2.3",
			fmt.Sprintf("state of db-1: %+v", got))
	})

	after := deleteAndWaitForReplacement(t, ns, "db-1")
	if got := after.Spec.NodeSelector[zoneKey]; got != zone {
		t.Errorf("recreated db-1 has nodeSelector %v, want %s=%s", after.Spec.NodeSelector, zoneKey, zone)
	}
	if got := zoneOfNode(after.Spec.NodeName); got != zone {
		t.Errorf("recreated db-1 runs on %s in %s, want its recorded zone %s", after.Spec.NodeName, got, zone)
	}
	var preferred []corev1.PreferredSchedulingTerm
	if a := after.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		preferred = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if len(preferred) != 1 || preferred[0].Weight != 50 || len(preferred[0].Preference.MatchExpressions) != 1 ||
		preferred[0].Preference.MatchExpressions[0].Values[0] != before.Spec.NodeName {
		t.Errorf("recreated db-1 preferred terms %+v, want weight 50 on %s=%s", preferred, hostKey, before.Spec.NodeName)
	}
	if got := after.Annotations[ipKey]; got != "10.1.2.3" {
		t.Errorf("recreated db-1 annotation %s=%q, want the recorded 10.1.2.3", ipKey, got)
	}
	if got := after.Annotations[restore.InjectedAnnotation]; got != "db" {
		t.Errorf("recreated db-1 annotation %s=%q, want db", restore.InjectedAnnotation, got)
	}
}

func TestWhenScaledDropsTheStateOfPodsScaledAway(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pps-", nil)
	framework.Create(t, env.Client, kinds.PersistentPodState("web", ns, "web").Required(zoneKey).Obj())
	framework.Create(t, env.Client, kinds.StatefulSet("web", ns).Replicas(3).Obj())
	statesAre(t, ns, "web", "three pods recorded", func(s map[string]appsv1alpha1.PodState) error {
		return framework.Want(len(s) == 3 && s["web-2"].NodeTopologyLabels[zoneKey] != "", fmt.Sprintf("states %v", s))
	})

	framework.Eventually(t, framework.Short, "scaled to one", func(ctx context.Context) error {
		sts := &appsv1beta1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, sts); err != nil {
			return err
		}
		one := int32(1)
		sts.Spec.Replicas = &one
		return env.Client.Update(ctx, sts)
	})
	statesAre(t, ns, "web", "only web-0 recorded", func(s map[string]appsv1alpha1.PodState) error {
		_, kept := s["web-0"]
		return framework.Want(len(s) == 1 && kept, fmt.Sprintf("states %v", s))
	})
}

func TestWorkloadAnnotationsGenerateAPersistentPodState(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pps-", nil)
	sts := generatingSet("auto", ns, 1)
	sts.Annotations[appsv1alpha1.AnnotationPersistentPodAnnotations] = ipKey
	framework.Create(t, env.Client, sts)

	pps := &appsv1alpha1.PersistentPodState{}
	framework.Eventually(t, framework.Medium, "a PersistentPodState generated for the StatefulSet", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auto"}, pps); err != nil {
			return err
		}
		spec := pps.Spec
		return framework.Want(spec.TargetReference.Kind == "StatefulSet" && spec.TargetReference.Name == "auto" &&
			spec.RequiredPersistentTopology != nil && strings.Join(spec.RequiredPersistentTopology.NodeTopologyKeys, ",") == zoneKey &&
			len(spec.PersistentPodAnnotations) == 1 && spec.PersistentPodAnnotations[0].Key == ipKey,
			fmt.Sprintf("spec %+v", spec))
	})
	statesAre(t, ns, "auto", "the generated PersistentPodState records auto-0", func(s map[string]appsv1alpha1.PodState) error {
		return framework.Want(s["auto-0"].NodeTopologyLabels[zoneKey] != "", fmt.Sprintf("states %v", s))
	})

	// Adding a preferred topology updates it; dropping the auto-generate annotation deletes it.
	framework.Eventually(t, framework.Short, "annotations changed", func(ctx context.Context) error {
		cur := &appsv1beta1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auto"}, cur); err != nil {
			return err
		}
		cur.Annotations[appsv1alpha1.AnnotationPreferredPersistentTopology] = hostKey
		return env.Client.Update(ctx, cur)
	})
	framework.Eventually(t, framework.Medium, "the generated PersistentPodState follows", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auto"}, pps); err != nil {
			return err
		}
		p := pps.Spec.PreferredPersistentTopology
		return framework.Want(len(p) == 1 && p[0].Weight == 100 && strings.Join(p[0].Preference.NodeTopologyKeys, ",") == hostKey, fmt.Sprintf("preferred %+v", p))
	})
	framework.Eventually(t, framework.Short, "auto-generate annotation removed", func(ctx context.Context) error {
		cur := &appsv1beta1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auto"}, cur); err != nil {
			return err
		}
		delete(cur.Annotations, appsv1alpha1.AnnotationAutoGeneratePersistentPodState)
		return env.Client.Update(ctx, cur)
	})
	framework.WaitGone(t, env.Client, client.ObjectKey{Namespace: ns, Name: "auto"}, &appsv1alpha1.PersistentPodState{}, framework.Medium, "the generated PersistentPodState deleted")
}

func TestWebhookKeepsOnePersistentPodStatePerWorkload(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pps-", nil)
	framework.Create(t, env.Client, kinds.PersistentPodState("first", ns, "db").Required(zoneKey).Obj())
	second := kinds.PersistentPodState("second", ns, "db").Required(zoneKey).Obj()
	second.Spec.TargetReference.APIVersion = "apps.kruise.io/v1alpha1"
	err := env.Client.Create(context.Background(), second)
	if err == nil || !strings.Contains(err.Error(), "spec.targetRef") || !strings.Contains(err.Error(), "first") {
		t.Errorf("second PersistentPodState for the same StatefulSet: %v, want refused naming spec.targetRef and the first one", err)
	}
	bad := kinds.PersistentPodState("bad", ns, "other").Preferred(0, zoneKey).Obj()
	err = env.Client.Create(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "spec.preferredPersistentTopology[0].weight") {
		t.Errorf("weight 0: %v, want refused naming spec.preferredPersistentTopology[0].weight", err)
	}
}

func TestAppsV1StatefulSetPodKeepsItsZoneThroughAGeneratedState(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pps-", nil)
	labels := map[string]string{"app": "kv"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kv", Namespace: ns, Annotations: map[string]string{
			appsv1alpha1.AnnotationAutoGeneratePersistentPodState: "true",
			appsv1alpha1.AnnotationRequiredPersistentTopology:     zoneKey,
		}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2), ServiceName: "kv",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: builder.DefaultImage}}},
			},
		},
	}
	framework.Create(t, env.Client, sts)
	before := readyPod(t, ns, "kv-1", "")
	zone := zoneOfNode(before.Spec.NodeName)
	statesAre(t, ns, "kv", "kv-1's zone recorded by the generated PersistentPodState", func(s map[string]appsv1alpha1.PodState) error {
		return framework.Want(s["kv-1"].NodeTopologyLabels[zoneKey] == zone, fmt.Sprintf("states %v", s))
	})
	after := deleteAndWaitForReplacement(t, ns, "kv-1")
	if got := after.Spec.NodeSelector[zoneKey]; got != zone {
		t.Errorf("recreated kv-1 has nodeSelector %v, want %s=%s", after.Spec.NodeSelector, zoneKey, zone)
	}
	if got := zoneOfNode(after.Spec.NodeName); got != zone {
		t.Errorf("recreated kv-1 runs on %s in %s, want its recorded zone %s", after.Spec.NodeName, got, zone)
	}
}

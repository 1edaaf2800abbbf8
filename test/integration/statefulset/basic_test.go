package statefulset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

func TestShouldProvideBasicIdentity(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 3), "ss-0", "ss-1", "ss-2")
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		o := p.Name[len("ss-"):]
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "ss" || p.Labels[statefulset.PodNameLabel] != p.Name || p.Labels[statefulset.PodIndexLabel] != o {
			t.Errorf("pod %s: hostname %q, subdomain %q, labels %v; want its own name, the service name and its ordinal", p.Name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
		}
	}
	// A deleted pod comes back under the same name.
	deleteAndWaitBack(t, framework.MustLivePods(t, env.Client, ns, "ss")[1], "ss-1 is made again with a new UID", func(p *corev1.Pod) error {
		return framework.Want(framework.PodReady(p), "ss-1 is not ready")
	})
}

func TestScalingShouldHappenInPredictableOrderAndHaltIfAnyStatefulPodIsUnhealthy(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 1), "ss-0")

	// ss-0 stops being ready: a scale-up must not create ss-1 until it is ready again.
	patchPodAnnotation(t, ns, "ss-0", framework.AnnotationNotReady, "true")
	framework.Eventually(t, framework.Medium, "ss-0 is not ready", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, "ss", false)
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == 1 && !framework.PodReady(&pods[0]), "ss-0 still ready")
	})
	change(t, ns, "ss", replicas(3))
	framework.Consistently(t, framework.Short/2, "no pod is created while ss-0 is not ready", havePods(ns, "ss", true, 1))
	// Once it is, pods come one at a time in ordinal order: ss-2 never exists without ss-1 ready.
	order := watchCreations(t, ns, "ss")
	patchPodAnnotation(t, ns, "ss-0", framework.AnnotationNotReady, "")
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	if diff := cmp.Diff([]string{"ss-1", "ss-2"}, order.names()); diff != "" {
		t.Errorf("creation order (-want +got):\n%s", diff)
	}
	if order.violations() > 0 {
		t.Errorf("%d pods were created while a lower ordinal was not ready", order.violations())
	}

	// Scale-down removes the highest ordinal first, one at a time, and halts behind an
	// unhealthy pod.
	patchPodAnnotation(t, ns, "ss-0", framework.AnnotationNotReady, "true")
	waitSet(t, ns, "ss", framework.Medium, "ss-0 is not ready", func(set *appsv1beta1.StatefulSet) error {
		return framework.Want(set.Status.ReadyReplicas == 2, fmt.Sprintf("readyReplicas %d", set.Status.ReadyReplicas))
	})
	change(t, ns, "ss", replicas(1))
	framework.Consistently(t, framework.Short/2, "no pod is removed while ss-0 is not ready", havePods(ns, "ss", false, 3))
	deletions := watchDeletions(t, ns, "ss")
	patchPodAnnotation(t, ns, "ss-0", framework.AnnotationNotReady, "")
	waitSettled(t, ns, "ss", rollout, "ss-0")
	if diff := cmp.Diff([]string{"ss-2", "ss-1"}, deletions.names()); diff != "" {
		t.Errorf("deletion order (-want +got):\n%s", diff)
	}
}

func TestShouldNotDeadlockWhenAPodsPredecessorFails(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2), "ss-0", "ss-1")
	patchPodAnnotation(t, ns, "ss-1", framework.AnnotationNotReady, "true")
	deleteAndWaitBack(t, framework.MustLivePods(t, env.Client, ns, "ss")[0], "ss-0 is made again while ss-1 is not ready", func(p *corev1.Pod) error {
		return framework.Want(framework.PodReady(p), "ss-0 not back")
	})
	patchPodAnnotation(t, ns, "ss-1", framework.AnnotationNotReady, "")
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
}

func TestBurstScalingShouldRunToCompletionEvenWithUnhealthyPods(t *testing.T) {
	ns := newNamespace(t)
	set := newSet("ss", ns, 3, parallel)
	set.Spec.Template.Annotations = map[string]string{framework.AnnotationNotReady: "true"}
	framework.Create(t, env.Client, set)
	framework.Eventually(t, rollout, "every pod of a Parallel set exists though none is ready", havePods(ns, "ss", false, 3))
	change(t, ns, "ss", replicas(0))
	framework.Eventually(t, rollout, "every pod is removed though none is ready", havePods(ns, "ss", true, 0))
}

func TestScaleStrategyMaxUnavailableBoundsParallelScaling(t *testing.T) {
	ns := newNamespace(t)
	set := newSet("ss", ns, 6, parallel)
	set.Spec.ScaleStrategy = &appsv1beta1.StatefulSetScaleStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(2))}
	// Each pod takes a while to be ready, so that too many at once would show.
	set.Spec.Template.Annotations = map[string]string{framework.AnnotationReadyDelay: "1s"}
	s := sample(ns, "ss", 6)
	framework.Create(t, env.Client, set)
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2", "ss-3", "ss-4", "ss-5")
	_, _, samples := s.finish()
	// What the bound limits is pods that exist and are not ready yet.
	notReady := s.notReadyLive()
	t.Logf("samples %d; most pods existing but not ready at once: %d", samples, notReady)
	if notReady > 2 {
		t.Errorf("%d pods were not ready at once; scaleStrategy.maxUnavailable is 2", notReady)
	}
}

func TestShouldAdoptMatchingOrphansAndReleaseNonMatchingPods(t *testing.T) {
	ns := newNamespace(t)
	// An orphan named as the set's pod exists before the set.
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ss-0", Namespace: ns, Labels: map[string]string{"app": "ss"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: imageV1}}},
	}
	framework.Create(t, env.Client, orphan)
	framework.Create(t, env.Client, newSet("ss", ns, 1))
	set := mustGetSet(t, ns, "ss")
	owner := func(ctx context.Context) (*metav1.OwnerReference, error) {
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ss-0"}, p); err != nil {
			return nil, err
		}
		return metav1.GetControllerOf(p), nil
	}
	framework.Eventually(t, framework.Medium, "the orphan ss-0 is adopted", func(ctx context.Context) error {
		ref, err := owner(ctx)
		if err != nil {
			return err
		}
		return framework.Want(ref != nil && ref.UID == set.UID, fmt.Sprintf("controller %v", ref))
	})

	patchPodLabel(t, ns, "ss-0", "app", "elsewhere")
	framework.Eventually(t, framework.Medium, "ss-0, no longer matching, is released", func(ctx context.Context) error {
		ref, err := owner(ctx)
		if err != nil {
			return err
		}
		return framework.Want(ref == nil, fmt.Sprintf("controller %v", ref))
	})

	patchPodLabel(t, ns, "ss-0", "app", "ss")
	framework.Eventually(t, framework.Medium, "ss-0, matching again, is adopted again", func(ctx context.Context) error {
		ref, err := owner(ctx)
		if err != nil {
			return err
		}
		return framework.Want(ref != nil && ref.UID == set.UID, fmt.Sprintf("controller %v", ref))
	})
}

func TestShouldRecreateEvictedStatefulset(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 1), "ss-0")
	first := framework.MustLivePods(t, env.Client, ns, "ss")[0]
	patchPodAnnotation(t, ns, "ss-0", framework.AnnotationPhase, string(corev1.PodFailed))
	waitBack(t, first, "the failed ss-0 is replaced by a running one", func(p *corev1.Pod) error {
		return framework.Want(p.Status.Phase == corev1.PodRunning && framework.PodReady(p), fmt.Sprintf("ss-0 %s, phase %s", p.UID, p.Status.Phase))
	})
}

func TestShouldHaveAWorkingScaleSubresource(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 1), "ss-0")
	scale, err := env.Clientset.Discovery().ServerResourcesForGroupVersion(appsv1beta1.GroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range scale.APIResources {
		found = found || r.Name == "statefulsets/scale"
	}
	if !found {
		t.Fatalf("statefulsets/scale is not served")
	}
	if out, errOut, err := env.Kubectl(context.Background(), "-n", ns, "scale", "statefulsets.apps.kruise.io/ss", "--replicas=2"); err != nil {
		t.Fatalf("kubectl scale: %v\n%s%s", err, out, errOut)
	}
	set := waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	if set.Status.LabelSelector != "app=ss" {
		t.Errorf("status.labelSelector %q, want app=ss for the scale subresource", set.Status.LabelSelector)
	}
}

func TestStartOrdinalAndReserveOrdinals(t *testing.T) {
	ns := newNamespace(t)
	set := newSet("ss", ns, 3, parallel)
	set.Spec.Ordinals = &appsv1beta1.StatefulSetOrdinals{Start: 2}
	framework.Create(t, env.Client, set)
	waitSettled(t, ns, "ss", rollout, "ss-2", "ss-3", "ss-4")

	// Increasing .start.ordinal moves the replicas up.
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { s.Spec.Ordinals.Start = 3 })
	waitSettled(t, ns, "ss", rollout, "ss-3", "ss-4", "ss-5")

	// Reserving ordinals deletes exactly those pods and keeps replicas running.
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) {
		s.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(4), intstr.FromString("6-7")}
	})
	waitSettled(t, ns, "ss", rollout, "ss-3", "ss-5", "ss-8")

	// Removing .start.ordinal starts again from 0.
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { s.Spec.Ordinals = nil })
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
}

func TestKubectlShowsThe18Columns(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2), "ss-0", "ss-1")
	out, errOut, err := env.Kubectl(context.Background(), "-n", ns, "get", "asts", "-o", "wide")
	if err != nil {
		t.Fatalf("kubectl get asts: %v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get asts printed %d lines:\n%s", len(lines), out)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	if diff := cmp.Diff([]string{"NAME", "DESIRED", "CURRENT", "UPDATED", "READY", "AGE", "CONTAINERS", "IMAGES"}, header); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(row) != 8 || strings.Join(row[:5], " ") != "ss 2 2 2 2" || row[6] != "main" || row[7] != imageV1 {
		t.Errorf("row %v; want ss 2 2 2 2 <age> main %s", row, imageV1)
	}
}

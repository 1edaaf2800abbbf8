package probegates

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// liveness is a liveness probe with every field the apiserver defaults already set, so the
// stored pod carries it unchanged.
func liveness() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "/healthy.sh"}}},
		TimeoutSeconds: 5, PeriodSeconds: 100, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

func TestEnhancedLivenessProbeMovesProbesIntoAnnotation(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "enhanced-liveness", nil)
	cloneSetPod := func(name string, annotate bool) *corev1.Pod {
		b := builder.Pod(name, ns).Container("log", builder.DefaultImage).OwnedBy(metav1.OwnerReference{
			APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web", UID: "cloneset-uid", Controller: ptr.To(true),
		})
		if annotate {
			b = b.Annotation(appsv1alpha1.AnnotationUsingEnhancedLiveness, "true")
		}
		p := b.Obj()
		p.Spec.Containers[0].LivenessProbe = liveness()
		return p
	}
	// 1.8's annotation: a JSON list of the containers' names and liveness probes.
	type entry struct {
		Name          string        `json:"name"`
		LivenessProbe *corev1.Probe `json:"livenessProbe"`
	}
	wantContext, err := json.Marshal([]entry{{Name: "main", LivenessProbe: liveness()}})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		pod  *corev1.Pod
		// wantContext is the apps.kruise.io/container-probe-context annotation, empty for none;
		// when set, main's liveness probe must be gone, else kept.
		wantContext string
	}{
		{name: "an annotated CloneSet pod is stored without its liveness probe, kept in the annotation", pod: cloneSetPod("annotated", true), wantContext: string(wantContext)},
		{name: "a CloneSet pod without the annotation keeps its liveness probe", pod: cloneSetPod("plain", false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			framework.Create(t, env.Client, tt.pod)
			got := framework.Get[corev1.Pod](t, env.Client, client.ObjectKeyFromObject(tt.pod))
			if c := got.Annotations[appsv1alpha1.AnnotationNativeContainerProbeContext]; c != tt.wantContext {
				t.Errorf("annotation %s = %q, want %q", appsv1alpha1.AnnotationNativeContainerProbeContext, c, tt.wantContext)
			}
			if kept := got.Spec.Containers[0].LivenessProbe != nil; kept != (tt.wantContext == "") {
				t.Errorf("main's liveness probe kept = %t, want %t", kept, tt.wantContext == "")
			}
		})
	}
}

// initializedPod creates a pod labelled app=web on nodeName and waits until it is Initialized,
// the state in which a marker counts it.
func initializedPod(t *testing.T, ns, name, nodeName string) *corev1.Pod {
	t.Helper()
	framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "web").Node(nodeName).Obj())
	return framework.WaitFor(t, env.Client, types.NamespacedName{Namespace: ns, Name: name}, framework.Medium, "pod "+name+" is initialized",
		func(p *corev1.Pod) error {
			return framework.Want(framework.PodCondition(p, corev1.PodInitialized) == corev1.ConditionTrue, "not initialized yet")
		})
}

func TestServerlessPodCarriesItsProbesInAnnotations(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "serverless-annotations", nil)
	ppm := kinds.PodProbeMarker("marker", ns, "web").
		ExecProbe("healthy", "main", "game.io/healthy", "/healthy.sh").
		Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").
		// Without a condition type the platform has nowhere to report: left out.
		ExecProbe("marked", "main", "", "/marked.sh").
		Marker(appsv1alpha1.ProbeSucceeded, "marked", "true").Obj()
	framework.Create(t, env.Client, ppm)
	pod := initializedPod(t, ns, "web", virtualNode)

	stored := framework.Get[appsv1alpha1.PodProbeMarker](t, env.Client, client.ObjectKeyFromObject(ppm))
	want := *stored.Spec.Probes[0].DeepCopy()
	want.MarkerPolicy = nil
	wantProbes, err := json.Marshal([]appsv1alpha1.PodContainerProbe{want})
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Annotations[appsv1alpha1.PodProbeMarkerAnnotationKey]; got != string(wantProbes) {
		t.Errorf("annotation %s = %s, want %s", appsv1alpha1.PodProbeMarkerAnnotationKey, got, wantProbes)
	}
	if got := pod.Annotations[appsv1alpha1.PodProbeMarkerListAnnotationKey]; got != "marker" {
		t.Errorf("annotation %s = %q, want %q", appsv1alpha1.PodProbeMarkerListAnnotationKey, got, "marker")
	}
}

func TestServerlessPodMarkedFromItsConditions(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "serverless-marks", nil)
	pod := initializedPod(t, ns, "web", virtualNode)
	ppm := kinds.PodProbeMarker("marker", ns, "web").
		ExecProbe("healthy", "main", "game.io/healthy", "/healthy.sh").
		Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").
		AnnotationMarker(appsv1alpha1.ProbeFailed, "example.com/unhealthy", "yes").Obj()
	framework.Create(t, env.Client, ppm)
	framework.WaitFor(t, env.Client, client.ObjectKeyFromObject(ppm), framework.Medium, "the marker counts the serverless pod",
		func(got *appsv1alpha1.PodProbeMarker) error {
			return framework.Want(got.Status.MatchedPods == 1 && got.Status.ObservedGeneration == got.Generation, fmt.Sprintf("status %+v", got.Status))
		})
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: virtualNode}, &appsv1alpha1.NodePodProbe{}); !apierrors.IsNotFound(err) {
		t.Errorf("the virtual-kubelet node has a NodePodProbe (err %v); its pods are probed by their platform", err)
	}

	key := client.ObjectKeyFromObject(pod)
	framework.SetPodCondition(t, env.Client, key, "game.io/healthy", corev1.ConditionTrue)
	framework.WaitFor(t, env.Client, key, framework.Medium, "a True condition labels the pod with the Succeeded policy",
		func(p *corev1.Pod) error {
			return framework.Want(p.Labels["healthy"] == "true", fmt.Sprintf("labels %v", p.Labels))
		})

	framework.SetPodCondition(t, env.Client, key, "game.io/healthy", corev1.ConditionFalse)
	got := framework.WaitFor(t, env.Client, key, framework.Medium, "a False condition annotates the pod with the Failed policy",
		func(p *corev1.Pod) error {
			return framework.Want(p.Annotations["example.com/unhealthy"] == "yes", fmt.Sprintf("annotations %v", p.Annotations))
		})
	if got.Labels["healthy"] != "true" {
		t.Errorf("labels %v: as in 1.8 the Succeeded label stays when the condition turns False", got.Labels)
	}
}

package podprobemarker

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// webPod creates a pod labelled app=web on node, with a container port named "http" (8080),
// and waits until it is Initialized with an IP, the state in which it is probed.
func webPod(t *testing.T, ns, name, node string) *corev1.Pod {
	t.Helper()
	pod := builder.Pod(name, ns).Label("app", "web").Node(node).Obj()
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	framework.Create(t, env.Client, pod)
	got := &corev1.Pod{}
	framework.Eventually(t, framework.Medium, "pod "+name+" is initialized with an IP", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			return err
		}
		return framework.Want(got.Status.PodIP != "" && framework.PodCondition(got, corev1.PodInitialized) == corev1.ConditionTrue, "not initialized yet")
	})
	return got
}

// entryOf returns the NodePodProbe entry of pod on its node, or nil.
func entryOf(ctx context.Context, pod *corev1.Pod) (*appsv1alpha1.PodProbe, error) {
	npp := &appsv1alpha1.NodePodProbe{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, npp); err != nil {
		return nil, err
	}
	for i := range npp.Spec.PodProbes {
		pp := &npp.Spec.PodProbes[i]
		if pp.Namespace == pod.Namespace && pp.Name == pod.Name && pp.UID == string(pod.UID) {
			return pp, nil
		}
	}
	return nil, nil
}

// probedPod creates a namespace of that prefix, a web pod in it on node and a PodProbeMarker
// probing the pods of app web with one exec probe, waits until the pod has its NodePodProbe
// entry, and returns the marker and the pod.
func probedPod(t *testing.T, prefix, node string) (*appsv1alpha1.PodProbeMarker, *corev1.Pod) {
	t.Helper()
	ns := framework.NewNamespace(t, env.Client, prefix, nil)
	pod := webPod(t, ns, "web", node)
	ppm := kinds.PodProbeMarker("marker", ns, "web").ExecProbe("healthy", "main", "game.io/healthy", "true").Obj()
	framework.Create(t, env.Client, ppm)
	waitEntry(t, pod)
	return ppm, pod
}

// waitEntry waits until pod has its entry in its node's NodePodProbe.
func waitEntry(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	waitEntryIs(t, pod, true, "pod "+pod.Name+" has its NodePodProbe entry")
}

// waitEntryIs waits until pod's entry in its node's NodePodProbe is there (present) or gone;
// what names the wait.
func waitEntryIs(t *testing.T, pod *corev1.Pod, present bool, what string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, what, func(ctx context.Context) error {
		pp, err := entryOf(ctx, pod)
		if err != nil {
			return err
		}
		if present {
			return framework.Want(pp != nil, "no entry yet")
		}
		return framework.Want(pp == nil, "entry still there")
	})
}

// report writes a probe result into the pod's NodePodProbe status, as kruise-daemon does.
func report(t *testing.T, pod *corev1.Pod, probe string, state appsv1alpha1.ProbeState, msg string) {
	t.Helper()
	framework.ChangeStatus(t, env.Client, types.NamespacedName{Name: pod.Spec.NodeName}, func(npp *appsv1alpha1.NodePodProbe) {
		now := metav1.Now()
		st := appsv1alpha1.ContainerProbeState{Name: probe, State: state, Message: msg, LastProbeTime: now, LastTransitionTime: now}
		found := false
		for i := range npp.Status.PodProbeStatuses {
			ps := &npp.Status.PodProbeStatuses[i]
			if ps.UID == string(pod.UID) {
				found = true
				ps.ProbeStates = []appsv1alpha1.ContainerProbeState{st}
			}
		}
		if !found {
			npp.Status.PodProbeStatuses = append(npp.Status.PodProbeStatuses, appsv1alpha1.PodProbeStatus{
				Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID), ProbeStates: []appsv1alpha1.ContainerProbeState{st}})
		}
	})
}

func TestNodePodProbePerNode(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ppm-nodes", nil)
	a := webPod(t, ns, "web-a", "node-0")
	b := webPod(t, ns, "web-b", "node-1")
	framework.Create(t, env.Client, builder.Pod("other", ns).Label("app", "db").Node("node-0").Obj())
	ppm := kinds.PodProbeMarker("marker", ns, "web").
		TCPProbe("port", "main", "game.io/port", intstr.FromString("http")).Obj()
	framework.Create(t, env.Client, ppm)

	for _, pod := range []*corev1.Pod{a, b} {
		framework.Eventually(t, framework.Medium, "the NodePodProbe of "+pod.Spec.NodeName+" holds the marker's probe for "+pod.Name, func(ctx context.Context) error {
			pp, err := entryOf(ctx, pod)
			if err != nil {
				return err
			}
			if pp == nil {
				return fmt.Errorf("no entry for %s", pod.Name)
			}
			if pp.IP != pod.Status.PodIP {
				return fmt.Errorf("IP %q, want %q", pp.IP, pod.Status.PodIP)
			}
			if len(pp.Probes) != 1 || pp.Probes[0].Name != "marker#port" || pp.Probes[0].ContainerName != "main" {
				return fmt.Errorf("probes %+v, want one marker#port in main", pp.Probes)
			}
			if port := pp.Probes[0].Probe.TCPSocket.Port; port != intstr.FromInt32(8080) {
				return fmt.Errorf("port %v, want the named port resolved to 8080", port)
			}
			return nil
		})
	}
	framework.Eventually(t, framework.Medium, "status counts the two matched pods", func(ctx context.Context) error {
		got := &appsv1alpha1.PodProbeMarker{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ppm), got); err != nil {
			return err
		}
		return framework.Want(got.Status.MatchedPods == 2 && got.Status.ObservedGeneration == got.Generation,
			fmt.Sprintf("status %+v, generation %d", got.Status, got.Generation))
	})
}

func TestResultsMarkPod(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ppm-marks", nil)
	pod := webPod(t, ns, "web", "node-0")
	framework.Create(t, env.Client, kinds.PodProbeMarker("marker", ns, "web").
		ExecProbe("healthy", "main", "game.io/healthy", "cat", "/ok").
		Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").
		AnnotationMarker(appsv1alpha1.ProbeFailed, "example.com/unhealthy", "yes").Obj())
	waitEntry(t, pod)

	report(t, pod, "marker#healthy", appsv1alpha1.ProbeSucceeded, "")
	framework.Eventually(t, framework.Medium, "a success labels the pod and sets its condition True", func(ctx context.Context) error {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			return err
		}
		if got.Labels["healthy"] != "true" {
			return fmt.Errorf("labels %v", got.Labels)
		}
		return framework.Want(framework.PodCondition(got, "game.io/healthy") == corev1.ConditionTrue, fmt.Sprintf("conditions %+v", got.Status.Conditions))
	})

	report(t, pod, "marker#healthy", appsv1alpha1.ProbeFailed, "cat: /ok: No such file")
	framework.Eventually(t, framework.Medium, "a failure takes the label off, annotates the pod and sets the condition False with the message", func(ctx context.Context) error {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			return err
		}
		if _, has := got.Labels["healthy"]; has {
			return fmt.Errorf("label healthy still there: %v", got.Labels)
		}
		if got.Annotations["example.com/unhealthy"] != "yes" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == "game.io/healthy" {
				return framework.Want(c.Status == corev1.ConditionFalse && c.Message == "cat: /ok: No such file", fmt.Sprintf("condition %+v", c))
			}
		}
		return fmt.Errorf("no game.io/healthy condition")
	})
}

func TestPodGoneEntryGone(t *testing.T) {
	_, pod := probedPod(t, "ppm-podgone", "node-1")
	framework.Delete(t, env.Client, pod)
	waitEntryIs(t, pod, false, "the deleted pod's entry leaves the NodePodProbe")
}

func TestMarkerDeletedCleansNodePodProbe(t *testing.T) {
	ppm, pod := probedPod(t, "ppm-cleanup", "node-0")
	framework.Delete(t, env.Client, ppm)
	framework.Eventually(t, framework.Medium, "the marker's probes leave the NodePodProbe and the marker goes", func(ctx context.Context) error {
		pp, err := entryOf(ctx, pod)
		if err != nil {
			return err
		}
		if pp != nil {
			return fmt.Errorf("entry still there: %+v", pp.Probes)
		}
		err = env.Client.Get(ctx, client.ObjectKeyFromObject(ppm), &appsv1alpha1.PodProbeMarker{})
		return framework.Want(apierrors.IsNotFound(err), fmt.Sprintf("marker still there (%v)", err))
	})
}

func TestWebhookNamesFields(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ppm-webhook", nil)
	// Each rule broken here is one the CRD schema cannot check: a reserved probe name, an
	// httpGet handler, and a condition type two probes share.
	bad := kinds.PodProbeMarker("bad", ns, "web").
		ExecProbe("Ready", "main", "game.io/healthy", "true").
		ExecProbe("check", "main", "game.io/healthy", "true").
		Edit(func(m *appsv1alpha1.PodProbeMarker) {
			m.Spec.Probes[1].Probe.Exec = nil
			m.Spec.Probes[1].Probe.HTTPGet = &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}
		}).Obj()
	framework.CreateRefused(t, env.Client, bad, "spec.probes[0].name", "spec.probes[1].probe.httpGet", "use exec or tcpSocket", "spec.probes[1].podConditionType")
}

func TestPodNoLongerMatchingLosesProbes(t *testing.T) {
	_, pod := probedPod(t, "ppm-relabel", "node-1")
	framework.MergePatch(t, env.Client, pod.DeepCopy(), `{"metadata":{"labels":{"app":"retired"}}}`)
	waitEntryIs(t, pod, false, "the relabelled pod's entry leaves the NodePodProbe")
}

func TestServerlessPodNotMarkedWithGateOff(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ppm-serverless-off", nil)
	pod := webPod(t, ns, "web", "vk-0")
	framework.SetPodCondition(t, env.Client, client.ObjectKeyFromObject(pod), "game.io/healthy", corev1.ConditionTrue)
	ppm := kinds.PodProbeMarker("marker", ns, "web").
		ExecProbe("healthy", "main", "game.io/healthy", "true").Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").Obj()
	framework.Create(t, env.Client, ppm)
	framework.WaitFor(t, env.Client, client.ObjectKeyFromObject(ppm), framework.Medium, "the marker counts the serverless pod",
		func(got *appsv1alpha1.PodProbeMarker) error {
			return framework.Want(got.Status.MatchedPods == 1 && got.Status.ObservedGeneration == got.Generation, fmt.Sprintf("status %+v", got.Status))
		})
	got := framework.Get[corev1.Pod](t, env.Client, client.ObjectKeyFromObject(pod))
	if _, has := got.Labels["healthy"]; has {
		t.Errorf("labels %v: with EnablePodProbeMarkerOnServerless off (1.8's default) a serverless pod is not marked from its conditions", got.Labels)
	}
}

// TestNodePodProbeComesAndGoesWithItsNode checks that a Ready node gets its NodePodProbe and
// that the NodePodProbe is deleted once the node is.
func TestNodePodProbeComesAndGoesWithItsNode(t *testing.T) {
	ctx := context.Background()
	extra, err := framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(), framework.WithNodes(builder.Node("extra-0").Obj()))
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Stop()
	key := client.ObjectKey{Name: "extra-0"}
	framework.Eventually(t, framework.Medium, "NodePodProbe extra-0 created for its Ready node", func(ctx context.Context) error {
		return env.Client.Get(ctx, key, &appsv1alpha1.NodePodProbe{})
	})

	if err := extra.DeleteNodes(ctx); err != nil {
		t.Fatal(err)
	}
	framework.WaitGone(t, env.Client, key, &appsv1alpha1.NodePodProbe{}, framework.Medium, "NodePodProbe extra-0 deleted with its node")
}

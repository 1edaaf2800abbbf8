package podprobemarker

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func runningPod(name, ip string) *corev1.Pod {
	p := builder.Pod(name, "ns").Node("node-0").Condition(corev1.PodInitialized, corev1.ConditionTrue).Obj()
	p.UID = types.UID(name + "-uid")
	p.Status.PodIP = ip
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	return p
}

// probe is the NodePodProbe form of a marker probe.
func probe(name string, h corev1.ProbeHandler) appsv1alpha1.ContainerProbe {
	return appsv1alpha1.ContainerProbe{Name: name, ContainerName: "main",
		Probe: appsv1alpha1.ContainerProbeSpec{Probe: corev1.Probe{ProbeHandler: h, PeriodSeconds: 1}}}
}

var (
	execCheck = corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/ok"}}}
	tcp8080   = corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}
)

func TestPlanNodePodProbe(t *testing.T) {
	marker := kinds.PodProbeMarker("m", "ns", "web").
		ExecProbe("check", "main", "", "cat", "/ok").Marker(appsv1alpha1.ProbeSucceeded, "ok", "true").Obj()
	namedPort := kinds.PodProbeMarker("m", "ns", "web").
		TCPProbe("port", "main", "Port", intstr.FromString("http")).Obj()
	unknownPort := kinds.PodProbeMarker("m", "ns", "web").
		TCPProbe("port", "main", "Port", intstr.FromString("grpc")).Obj()
	entry := func(pod string, ip string, probes ...appsv1alpha1.ContainerProbe) appsv1alpha1.PodProbe {
		return appsv1alpha1.PodProbe{Name: pod, Namespace: "ns", UID: pod + "-uid", IP: ip, Probes: probes}
	}
	type tcase struct {
		cur         appsv1alpha1.NodePodProbeSpec
		ppm         *appsv1alpha1.PodProbeMarker
		pods        []*corev1.Pod
		want        appsv1alpha1.NodePodProbeSpec
		wantChanged bool
		wantSkipped int
	}
	cases := map[string]tcase{
		"a new pod gets an entry with its IP and the marker's probes named marker#probe": {
			ppm: marker, pods: []*corev1.Pod{runningPod("a", "10.0.0.1")},
			want:        appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#check", execCheck))}},
			wantChanged: true,
		},
		"an entry already holding the probes is left alone": {
			cur: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#check", execCheck))}},
			ppm: marker, pods: []*corev1.Pod{runningPod("a", "10.0.0.1")},
			want: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#check", execCheck))}},
		},
		"probes of other markers on the pod are kept and a probe gone from the marker leaves": {
			cur: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#old", execCheck), probe("other#x", execCheck))}},
			ppm: marker, pods: []*corev1.Pod{runningPod("a", "10.0.0.1")},
			want:        appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#check", execCheck), probe("other#x", execCheck))}},
			wantChanged: true,
		},
		"an entry without an IP gets the pod's": {
			cur: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "", probe("m#check", execCheck))}},
			ppm: marker, pods: []*corev1.Pod{runningPod("a", "10.0.0.1")},
			want:        appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#check", execCheck))}},
			wantChanged: true,
		},
		"a pod of the namespace no longer matching loses the marker's probes, and its entry goes when none is left": {
			cur: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{
				entry("gone", "10.0.0.2", probe("m#check", execCheck)), entry("kept", "10.0.0.3", probe("m#check", execCheck), probe("other#x", execCheck)),
				{Name: "elsewhere", Namespace: "other-ns", UID: "e", Probes: []appsv1alpha1.ContainerProbe{probe("m#check", execCheck)}}}},
			ppm: marker,
			want: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("kept", "10.0.0.3", probe("other#x", execCheck)),
				{Name: "elsewhere", Namespace: "other-ns", UID: "e", Probes: []appsv1alpha1.ContainerProbe{probe("m#check", execCheck)}}}},
			wantChanged: true,
		},
		"a named tcp port is turned into the container's number": {
			ppm: namedPort, pods: []*corev1.Pod{runningPod("a", "10.0.0.1")},
			want:        appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{entry("a", "10.0.0.1", probe("m#port", tcp8080))}},
			wantChanged: true,
		},
		"a probe naming a port the container lacks is left out and reported": {
			ppm: unknownPort, pods: []*corev1.Pod{runningPod("a", "10.0.0.1")},
			wantSkipped: 1,
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, changed, skipped := PlanNodePodProbe(tc.cur, tc.ppm, tc.pods)
		testkit.Diff(t, "spec", tc.want, got)
		if changed != tc.wantChanged {
			t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
		}
		if len(skipped) != tc.wantSkipped {
			t.Errorf("skipped = %q, want %d", skipped, tc.wantSkipped)
		}
	})
}

func TestRemoveMarker(t *testing.T) {
	pp := func(ns, pod string, names ...string) appsv1alpha1.PodProbe {
		p := appsv1alpha1.PodProbe{Name: pod, Namespace: ns, UID: pod, IP: "10.0.0.1"}
		for _, n := range names {
			p.Probes = append(p.Probes, probe(n, execCheck))
		}
		return p
	}
	type tcase struct {
		cur         appsv1alpha1.NodePodProbeSpec
		want        appsv1alpha1.NodePodProbeSpec
		wantChanged bool
	}
	cases := map[string]tcase{
		"the marker's probes go and a pod left with none leaves": {
			cur:         appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{pp("ns", "a", "m#x"), pp("ns", "b", "m#x", "n#y")}},
			want:        appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{pp("ns", "b", "n#y")}},
			wantChanged: true,
		},
		"a marker of the same name in another namespace is not touched": {
			cur:  appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{pp("other", "a", "m#x")}},
			want: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{pp("other", "a", "m#x")}},
		},
		"a marker whose name is a prefix of another's leaves the other alone": {
			cur:  appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{pp("ns", "a", "mm#x")}},
			want: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{pp("ns", "a", "mm#x")}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, changed := RemoveMarker(tc.cur, "ns", "m")
		testkit.Diff(t, "spec", tc.want, got)
		if changed != tc.wantChanged {
			t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
		}
	})
}

func TestProbed(t *testing.T) {
	type tcase struct {
		pod  *corev1.Pod
		want bool
	}
	cases := map[string]tcase{
		"a scheduled, initialized, running pod is probed": {pod: runningPod("a", "10.0.0.1"), want: true},
		"a pod not yet initialized is not":                {pod: builder.Pod("a", "ns").Node("n").Obj()},
		"an unscheduled pod is not":                       {pod: builder.Pod("a", "ns").Condition(corev1.PodInitialized, corev1.ConditionTrue).Obj()},
		"a finished pod is not": {pod: builder.Pod("a", "ns").Node("n").Condition(corev1.PodInitialized, corev1.ConditionTrue).
			Phase(corev1.PodSucceeded).Obj()},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		if got := Probed(tc.pod); got != tc.want {
			t.Errorf("Probed = %v, want %v", got, tc.want)
		}
	})
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// probePodName is the plain pod the PodProbeMarker step probes.
const probePodName = "probe-target"

// testPodProbeMarker: a PodProbeMarker with two exec probes on a real pod. The daemon runs them
// in the container through containerd; the one whose file exists marks the pod with a label and
// a True condition, the one whose file is missing with an annotation and a False condition.
func testPodProbeMarker(t *testing.T, cl *cluster) {
	manifests := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {app: probe-target}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %[3]s/e2e/sample:v1
---
apiVersion: apps.kruise.io/v1alpha1
kind: PodProbeMarker
metadata:
  name: e2e-probes
  namespace: %[2]s
spec:
  selector:
    matchLabels: {app: probe-target}
  probes:
%[4]s%[5]s`, probePodName, ns, cl.registry,
		existsProbe("versioned", "/etc/image-version", "Succeeded", "labels: {e2e-probe: versioned}"),
		existsProbe("configured", "/etc/not-there", "Failed", `annotations: {e2e.kruise.io/configured: "no"}`))
	_, err := cl.kubectlRun(t, manifests, "apply", "-f", "-")
	require.NoError(t, err, "apply the pod and the PodProbeMarker")
	t.Cleanup(func() {
		_, _ = cl.kubectlRun(t, manifests, "delete", "--wait=false", "-f", "-")
	})

	framework.Eventually(t, rolloutTimeout, "the probes' results are on the pod", func(context.Context) error {
		p := &corev1.Pod{}
		if err := cl.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: probePodName}, p); err != nil {
			return err
		}
		if p.Labels["e2e-probe"] != "versioned" {
			return fmt.Errorf("label e2e-probe %q, conditions %+v", p.Labels["e2e-probe"], p.Status.Conditions)
		}
		if p.Annotations["e2e.kruise.io/configured"] != "no" {
			return fmt.Errorf("annotation e2e.kruise.io/configured %q", p.Annotations["e2e.kruise.io/configured"])
		}
		want := map[corev1.PodConditionType]corev1.ConditionStatus{"e2e.kruise.io/versioned": corev1.ConditionTrue, "e2e.kruise.io/configured": corev1.ConditionFalse}
		for _, c := range p.Status.Conditions {
			if s, ok := want[c.Type]; ok && s == c.Status {
				delete(want, c.Type)
			}
		}
		return framework.Want(len(want) == 0, fmt.Sprintf("conditions still wanted %v, pod has %+v", want, p.Status.Conditions))
	})
}

// existsProbe is a PodProbeMarker probe named name of container main that runs the sample
// image's "exists file" every 2 seconds and, in state, marks the pod with marker; its pod
// condition is e2e.kruise.io/<name>.
func existsProbe(name, file, state, marker string) string {
	return fmt.Sprintf(`  - name: %[1]s
    containerName: main
    podConditionType: e2e.kruise.io/%[1]s
    probe:
      exec: {command: ["/sample", "exists", "%[2]s"]}
      periodSeconds: 2
    markerPolicy:
    - state: %[3]s
      %[4]s
`, name, file, state, marker)
}

package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The manager's liveness probe comes from manager.livenessProbe: the defaults, the user's
// times, or none at all.
func TestManagerLivenessProbeFromValues(t *testing.T) {
	probe := func(delay, period, timeout, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("health")}},
			InitialDelaySeconds: delay, PeriodSeconds: period, TimeoutSeconds: timeout, FailureThreshold: failures,
		}
	}
	cases := []struct {
		name string
		vals map[string]any
		want *corev1.Probe
	}{
		{"the defaults give a generous probe", nil, probe(30, 10, 1, 6)},
		{"the user's times are used", values("manager.livenessProbe", map[string]any{"initialDelaySeconds": 120, "periodSeconds": 20, "timeoutSeconds": 5, "failureThreshold": 10}), probe(120, 20, 5, 10)},
		{"one changed time keeps the other defaults", values("manager.livenessProbe.failureThreshold", 3), probe(30, 10, 1, 3)},
		{"enabled false drops the probe", values("manager.livenessProbe.enabled", false), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := managerPod(t, tc.vals).Containers[0].LivenessProbe
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("liveness probe (-want +got):\n%s", diff)
			}
		})
	}
}

package installer

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Readiness counts ready replicas of the manager and the daemon.
type Readiness struct {
	ManagerReady   int32 `json:"managerReady"`
	ManagerDesired int32 `json:"managerDesired"`
	DaemonReady    int32 `json:"daemonReady"`
	DaemonDesired  int32 `json:"daemonDesired"`
	// DaemonPresent is false when the chart renders no daemon.
	DaemonPresent bool `json:"daemonPresent"`
}

// String renders "ready 1/2: manager 0/1, daemon 2/2".
func (r Readiness) String() string {
	total, ready := 1, 0
	if r.ManagerDesired > 0 && r.ManagerReady >= r.ManagerDesired {
		ready++
	}
	s := fmt.Sprintf("manager %d/%d", r.ManagerReady, r.ManagerDesired)
	if r.DaemonPresent {
		s += fmt.Sprintf(", daemon %d/%d", r.DaemonReady, r.DaemonDesired)
		// A daemon no node runs yet is not a component that is ready.
		if r.DaemonDesired > 0 {
			total++
			if r.DaemonReady >= r.DaemonDesired {
				ready++
			}
		} else {
			s += " (on no node yet)"
		}
	}
	return fmt.Sprintf("ready %d/%d: %s", ready, total, s)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

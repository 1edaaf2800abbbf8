package installer

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// Status is the add-on as it runs.
type Status struct {
	Release   *Result   `json:"release,omitempty"`
	State     string    `json:"state"`
	Readiness Readiness `json:"readiness"`
	Webhook   Webhook   `json:"webhook"`
	// DaemonNodes maps node name to whether its daemon pod is ready.
	DaemonNodes []DaemonNode `json:"daemonNodes,omitempty"`
}

// DaemonNode is the daemon on one node.
type DaemonNode struct {
	Node  string `json:"node"`
	Pod   string `json:"pod"`
	Ready bool   `json:"ready"`
}

// Status reports the release, each component's readiness, the webhook and the daemon per node.
func (i *Installer) Status(ctx context.Context, o Options) (*Status, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	_, last, _, err := i.openRelease(ctx, release.CmdStatus, o)
	if err != nil {
		return nil, err
	}
	st := &Status{State: string(release.StateOf(last))}
	if last != nil {
		st.Release = resultOf(last, release.StepNone)
	}
	if st.Readiness, err = i.readiness(ctx, o.Namespace); err != nil {
		return nil, err
	}
	if st.Webhook, err = i.webhook(ctx, o.Namespace); err != nil {
		return nil, err
	}
	pods, err := i.kube.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=daemon"})
	if err != nil {
		return nil, fmt.Errorf("list daemon pods: %w", err)
	}
	for _, p := range pods.Items {
		st.DaemonNodes = append(st.DaemonNodes, DaemonNode{Node: p.Spec.NodeName, Pod: p.Name, Ready: podReady(&p)})
	}
	sort.Slice(st.DaemonNodes, func(a, b int) bool { return st.DaemonNodes[a].Node < st.DaemonNodes[b].Node })
	return st, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

package installer

import (
	"context"
	"fmt"
	"sort"

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

// Status reports the release, each component's readiness, the webhook, and the daemon per node
// with the container runtime it detected there.
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
	sort.Slice(pods.Items, func(a, b int) bool { return pods.Items[a].Spec.NodeName < pods.Items[b].Spec.NodeName })
	for _, p := range pods.Items {
		st.DaemonNodes = append(st.DaemonNodes, DaemonNode{Node: p.Spec.NodeName, Pod: p.Name, Ready: podReady(&p)})
	}
	i.daemonRuntimes(ctx, pods.Items, st.DaemonNodes)
	return st, nil
}

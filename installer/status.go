package installer

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// FeatureGates is the manager's --feature-gates as deployed (the chart adds
	// ImagePullJobGate=true while the daemon runs); empty when the manager is absent.
	FeatureGates string `json:"featureGates,omitempty"`
	// Advice says what to do about the release's state, when there is something to do.
	Advice string `json:"advice,omitempty"`
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
	if st.FeatureGates, err = i.managerGates(ctx, o.Namespace); err != nil {
		return nil, err
	}
	st.Advice = adviceFor(release.StateOf(last))
	return st, nil
}

// managerGates reads the --feature-gates argument of the manager's Deployment.
func (i *Installer) managerGates(ctx context.Context, namespace string) (string, error) {
	d, err := i.kube.AppsV1().Deployments(namespace).Get(ctx, "kruise-controller-manager", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get manager deployment: %w", err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
				return v, nil
			}
		}
	}
	return "", nil
}

// adviceFor says what to do about a release in a state that needs it.
func adviceFor(s release.State) string {
	switch s {
	case release.Uninstalling:
		return "the release is stuck uninstalling: a plain `helm uninstall` failed in its pre-delete check (custom resources remain: " +
			"kubectl logs -n <namespace> job/kruise-uninstall-check names them) or its check Job could not run (no node to run it); " +
			"delete what it names and run the uninstall again, or `kruise-addon uninstall`, which checks in-process, after `kruise-addon unlock`"
	case release.Pending:
		return "the release is stuck pending: an install, upgrade or rollback was interrupted; `kruise-addon unlock` marks it failed, then upgrade or uninstall continues"
	case release.Failed:
		return "the last install or upgrade failed; `kruise-addon upgrade` repairs it"
	}
	return ""
}

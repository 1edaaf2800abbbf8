package server

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
	"github.com/kruise-addon/kruise-addon/versions"
)

// Health issue codes.
const (
	// IssueReleaseStuck: the release is pending or uninstalling and no operation of this server
	// runs on it (an interrupted command, or a server restarted mid-operation); unlock frees it.
	IssueReleaseStuck = "ReleaseStuck"
	// IssueReleaseFailed: the latest revision failed; an upgrade (or uninstall) continues.
	IssueReleaseFailed = "ReleaseFailed"
	// IssueInsufficientReplicas: fewer manager replicas are ready than desired.
	IssueInsufficientReplicas = "InsufficientReplicas"
	// IssueDaemonNotReadyOnNodes: the daemon pod is not ready on some nodes.
	IssueDaemonNotReadyOnNodes = "DaemonNotReadyOnNodes"
	// IssueWebhookUnreachable: the apiserver cannot call the manager's webhooks (no ready
	// endpoint, configurations missing, or the CA not in them yet).
	IssueWebhookUnreachable = "WebhookUnreachable"
	// IssueUnsupportedRuntime: nodes run a container runtime the release's daemon cannot use.
	IssueUnsupportedRuntime = "UnsupportedRuntime"
	// IssueCustomResourcesRemain: the release is gone (or going) while custom resources of the
	// add-on remain, with no controller to act on them.
	IssueCustomResourcesRemain = "CustomResourcesRemain"
)

// Issue is one health problem. ResourceIDs name what it is about as Kind/name or
// Kind/namespace/name.
type Issue struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	ResourceIDs []string `json:"resourceIds,omitempty"`
}

// healthInput is what the issues are derived from.
type healthInput struct {
	Namespace, Release string
	Status             installer.Status
	// Facts are the cluster's nodes and version; nil when not read.
	Facts *facts.Facts
	Table *versions.Table
	// Remaining are the add-on's custom resources left; read only when the release is absent
	// or uninstalling.
	Remaining []uninstallgate.KindCount
	// RunningOperation is the operation of this server running on the release, "" if none.
	RunningOperation string
}

// healthIssues derives the health issues from the status, the facts and the custom resources
// left. It is pure.
func healthIssues(in healthInput) []Issue {
	issues := []Issue{}
	st := in.Status
	releaseID := fmt.Sprintf("Release/%s/%s", in.Namespace, in.Release)
	state := release.State(st.State)
	revision := ""
	if st.Release != nil {
		revision = fmt.Sprintf(" (revision %d, %s)", st.Release.Revision, st.Release.Status)
	}
	switch {
	case (state == release.Pending || state == release.Uninstalling) && in.RunningOperation == "":
		issues = append(issues, Issue{Code: IssueReleaseStuck, ResourceIDs: []string{releaseID},
			Message: fmt.Sprintf("release %s/%s is %s%s and no operation runs on it: an earlier command or server was interrupted; POST unlock marks it failed, then upgrade or uninstall continues", in.Namespace, in.Release, state, revision)})
	case state == release.Failed:
		issues = append(issues, Issue{Code: IssueReleaseFailed, ResourceIDs: []string{releaseID},
			Message: fmt.Sprintf("release %s/%s failed%s; an upgrade repairs it, or uninstall removes it", in.Namespace, in.Release, revision)})
	}
	if state == release.Absent || state == release.Uninstalling {
		if len(in.Remaining) > 0 {
			ids := make([]string, 0, len(in.Remaining))
			for _, k := range in.Remaining {
				ids = append(ids, k.Kind)
			}
			issues = append(issues, Issue{Code: IssueCustomResourcesRemain, ResourceIDs: ids,
				Message: "the add-on is not installed but its custom resources remain, with no controller to act on them: " + uninstallgate.Describe(in.Remaining)})
		}
		return issues
	}
	rd := st.Readiness
	if rd.ManagerReady < rd.ManagerDesired {
		issues = append(issues, Issue{Code: IssueInsufficientReplicas, ResourceIDs: []string{"Deployment/" + in.Namespace + "/kruise-controller-manager"},
			Message: fmt.Sprintf("%d of %d manager replicas are ready", rd.ManagerReady, rd.ManagerDesired)})
	}
	var notReady []string
	for _, d := range st.DaemonNodes {
		if !d.Ready {
			notReady = append(notReady, "Node/"+d.Node)
		}
	}
	if len(notReady) > 0 || (rd.DaemonPresent && rd.DaemonReady < rd.DaemonDesired) {
		issues = append(issues, Issue{Code: IssueDaemonNotReadyOnNodes, ResourceIDs: append([]string{"DaemonSet/" + in.Namespace + "/kruise-daemon"}, notReady...),
			Message: fmt.Sprintf("%d of %d daemon pods are ready", rd.DaemonReady, rd.DaemonDesired)})
	}
	if !st.Webhook.Reachable {
		ids := []string{}
		for _, c := range st.Webhook.MissingCA {
			name, _, _ := strings.Cut(c, " ")
			ids = append(ids, "WebhookConfiguration/"+name)
		}
		if st.Webhook.Mode != installer.WebhookModeURL {
			ids = append(ids, "Service/"+in.Namespace+"/kruise-webhook-service")
		}
		issues = append(issues, Issue{Code: IssueWebhookUnreachable, ResourceIDs: ids, Message: st.Webhook.Message})
	}
	if in.Facts != nil && in.Table != nil && st.Release != nil && rd.DaemonPresent {
		if issue, ok := unsupportedRuntime(*in.Facts, in.Table, st.Release.AppVersion); ok {
			issues = append(issues, issue)
		}
	}
	return issues
}

// unsupportedRuntime names the nodes whose runtime the daemon of addon cannot use.
func unsupportedRuntime(f facts.Facts, t *versions.Table, addon string) (Issue, bool) {
	cv, err := versions.ParseClusterVersion(f.ServerVersion)
	if err != nil {
		return Issue{}, false
	}
	reasons := map[string]bool{}
	var ids []string
	for _, n := range f.Nodes {
		if ok, why := t.RuntimeSupported(addon, cv, n.ContainerRuntimeVersion); !ok {
			ids = append(ids, "Node/"+n.Name)
			reasons[why] = true
		}
	}
	if len(ids) == 0 {
		return Issue{}, false
	}
	sort.Strings(ids)
	var msgs []string
	for r := range reasons {
		msgs = append(msgs, r)
	}
	sort.Strings(msgs)
	return Issue{Code: IssueUnsupportedRuntime, ResourceIDs: ids, Message: strings.Join(msgs, "; ")}, true
}

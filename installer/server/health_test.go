package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
	"github.com/kruise-addon/kruise-addon/versions"
)

func TestHealthIssues(t *testing.T) {
	table, err := versions.Load()
	if err != nil {
		t.Fatal(err)
	}
	rel := &installer.Result{Release: "kruise-addon", Namespace: "kruise-system", Revision: 2, Status: "deployed", AppVersion: "1.2.0"}
	healthy := installer.Status{State: "deployed", Release: rel,
		Readiness:   installer.Readiness{ManagerReady: 1, ManagerDesired: 1, DaemonReady: 2, DaemonDesired: 2, DaemonPresent: true},
		Webhook:     installer.Webhook{Mode: "service", Reachable: true, Message: "ok"},
		DaemonNodes: []installer.DaemonNode{{Node: "a", Ready: true}, {Node: "b", Ready: true}}}
	with := func(f func(*installer.Status)) installer.Status {
		s := healthy
		s.DaemonNodes = append([]installer.DaemonNode(nil), healthy.DaemonNodes...)
		f(&s)
		return s
	}
	nodes := func(runtimes ...string) *facts.Facts {
		f := &facts.Facts{ServerVersion: "v1.30.2"}
		for k, r := range runtimes {
			f.Nodes = append(f.Nodes, facts.Node{Name: string(rune('a' + k)), ContainerRuntimeVersion: r})
		}
		return f
	}
	cloneSets := []uninstallgate.KindCount{{Kind: "CloneSet", Namespaced: true, Count: 2, Namespaces: []string{"web"}}}
	cases := []struct {
		name  string
		in    healthInput
		codes []string
		ids   [][]string
	}{
		{"a deployed add-on with everything ready has no issue",
			healthInput{Status: healthy, Facts: nodes("containerd://1.7.2", "containerd://1.7.2")}, nil, nil},
		{"no release and nothing left is no issue",
			healthInput{Status: installer.Status{State: "absent"}}, nil, nil},
		{"a pending release no operation runs on is stuck",
			healthInput{Status: with(func(s *installer.Status) { s.State = "pending" })},
			[]string{IssueReleaseStuck}, [][]string{{"Release/kruise-system/kruise-addon"}}},
		{"a pending release an operation of this server runs on is not stuck",
			healthInput{Status: with(func(s *installer.Status) { s.State = "pending" }), RunningOperation: "op-1"}, nil, nil},
		{"a release stuck uninstalling with custom resources left reports both",
			healthInput{Status: installer.Status{State: "uninstalling", Release: rel}, Remaining: cloneSets},
			[]string{IssueReleaseStuck, IssueCustomResourcesRemain}, [][]string{{"Release/kruise-system/kruise-addon"}, {"CloneSet"}}},
		{"custom resources left without a release remain",
			healthInput{Status: installer.Status{State: "absent"}, Remaining: cloneSets},
			[]string{IssueCustomResourcesRemain}, [][]string{{"CloneSet"}}},
		{"a failed release is reported as failed, not stuck",
			healthInput{Status: with(func(s *installer.Status) { s.State = "failed" })},
			[]string{IssueReleaseFailed}, [][]string{{"Release/kruise-system/kruise-addon"}}},
		{"fewer ready manager replicas than desired are insufficient",
			healthInput{Status: with(func(s *installer.Status) { s.Readiness.ManagerReady = 0 })},
			[]string{IssueInsufficientReplicas}, [][]string{{"Deployment/kruise-system/kruise-controller-manager"}}},
		{"a daemon pod not ready names its node",
			healthInput{Status: with(func(s *installer.Status) { s.Readiness.DaemonReady = 1; s.DaemonNodes[1].Ready = false })},
			[]string{IssueDaemonNotReadyOnNodes}, [][]string{{"DaemonSet/kruise-system/kruise-daemon", "Node/b"}}},
		{"a daemon pod not yet created still counts as not ready",
			healthInput{Status: with(func(s *installer.Status) { s.Readiness.DaemonReady = 1; s.DaemonNodes = s.DaemonNodes[:1] })},
			[]string{IssueDaemonNotReadyOnNodes}, [][]string{{"DaemonSet/kruise-system/kruise-daemon"}}},
		{"a webhook without its CA names the configuration",
			healthInput{Status: with(func(s *installer.Status) {
				s.Webhook = installer.Webhook{Mode: "service", MissingCA: []string{"kruise-mutating-webhook-configuration (3 of 3 webhooks)"}, Message: "no CA"}
			})},
			[]string{IssueWebhookUnreachable}, [][]string{{"WebhookConfiguration/kruise-mutating-webhook-configuration", "Service/kruise-system/kruise-webhook-service"}}},
		{"a webhook in URL mode names no Service",
			healthInput{Status: with(func(s *installer.Status) { s.Webhook = installer.Webhook{Mode: "url", Message: "no ready manager"} })},
			[]string{IssueWebhookUnreachable}, [][]string{{}}},
		{"a node whose runtime the release's daemon cannot use is named",
			healthInput{Status: with(func(s *installer.Status) { r := *rel; r.AppVersion = "1.0.40"; s.Release = &r }), Facts: nodes("containerd://1.7.2", "docker://24.0.7")},
			[]string{IssueUnsupportedRuntime}, [][]string{{"Node/b"}}},
		{"a runtime the release's daemon can use is no issue",
			healthInput{Status: healthy, Facts: nodes("containerd://1.7.2", "docker://24.0.7")}, nil, nil},
		{"every unsupported node is named, whichever it is",
			healthInput{Status: with(func(s *installer.Status) { r := *rel; r.AppVersion = "1.0.40"; s.Release = &r }), Facts: nodes("docker://24.0.7", "containerd://1.7.2")},
			[]string{IssueUnsupportedRuntime}, [][]string{{"Node/a"}}},
		{"without a daemon no runtime is unsupported",
			healthInput{Status: with(func(s *installer.Status) { s.Readiness.DaemonPresent = false; s.DaemonNodes = nil }), Facts: nodes("docker://24.0.7")}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Namespace, tc.in.Release, tc.in.Table = "kruise-system", "kruise-addon", table
			got := healthIssues(tc.in)
			var codes []string
			var ids [][]string
			for _, i := range got {
				codes = append(codes, i.Code)
				ids = append(ids, append([]string{}, i.ResourceIDs...))
				if i.Message == "" {
					t.Errorf("issue %s has no message", i.Code)
				}
			}
			if diff := cmp.Diff(tc.codes, codes); diff != "" {
				t.Errorf("codes (-want +got):\n%s", diff)
			}
			if tc.ids != nil {
				if diff := cmp.Diff(tc.ids, ids); diff != "" {
					t.Errorf("resource IDs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

package installer

import (
	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/release"
)

// Result describes the release after a command.
type Result struct {
	Release      string            `json:"release"`
	Namespace    string            `json:"namespace"`
	Revision     int               `json:"revision"`
	Status       string            `json:"status"`
	ChartVersion string            `json:"chartVersion"`
	AppVersion   string            `json:"appVersion"`
	Step         release.Step      `json:"step"`
	Message      string            `json:"message,omitempty"`
	Preflight    *preflight.Report `json:"preflight,omitempty"`
	// Webhook is the webhook as the command left it: the readiness wait covers the manager's
	// pods, and this says whether the manager has patched its CA into each configuration yet.
	Webhook *Webhook `json:"webhook,omitempty"`
}

func resultOf(r *helmrelease.Release, step release.Step) *Result {
	res := &Result{Release: r.Name, Namespace: r.Namespace, Revision: r.Version, Step: step}
	if r.Info != nil {
		res.Status = r.Info.Status.String()
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		res.ChartVersion, res.AppVersion = r.Chart.Metadata.Version, r.Chart.Metadata.AppVersion
	}
	return res
}

package server

import (
	"strings"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
)

// apiWording turns the library's words for a CLI user (its flags and commands) into this API's
// fields and routes, for the people reading a console. Longer forms come first, so that
// "--spec custom" is not read as "--spec" followed by text.
var apiWording = strings.NewReplacer(
	"`kruise-addon install`", "POST /v1/clusters/{cluster}/addon/install",
	"`kruise-addon upgrade`", "POST /v1/clusters/{cluster}/addon/upgrade",
	"`kruise-addon uninstall`", "POST /v1/clusters/{cluster}/addon/uninstall",
	"`kruise-addon unlock`", "POST /v1/clusters/{cluster}/addon/unlock",
	"`kruise-addon rollback`", "POST /v1/clusters/{cluster}/addon/rollback",
	"--wait=false", "wait: false",
	"--spec custom", "spec.preset: custom",
	"--spec large", "spec.preset: large",
	"--spec small", "spec.preset: small",
	"--spec", "spec.preset",
	"--zone-mode", "placement.zoneMode",
	"--exclude-unsupported-nodes", "excludeUnsupportedNodes: true",
	"--toleration", "placement.tolerations",
	"--cpu-request", "spec.resources.requestsCPU",
	"--memory-request", "spec.resources.requestsMemory",
	"--delete-crds", "deleteCRDs: true",
	"--reset-values", "resetValues: true",
	"--to-revision", "toRevision",
	"--install", "install: true",
	"--force", "force: true",
)

// forConsole rewords an error body, its refusal's preflight report included.
func forConsole(b ErrorBody) ErrorBody {
	b.Error = apiWording.Replace(b.Error)
	if b.Refused != nil {
		r := *b.Refused
		r.Reason = apiWording.Replace(r.Reason)
		r.Preflight = reportForConsole(r.Preflight)
		b.Refused = &r
	}
	return b
}

// reportForConsole rewords a preflight report's messages and fixes.
func reportForConsole(r *preflight.Report) *preflight.Report {
	if r == nil {
		return nil
	}
	out := *r
	out.Verdicts = make([]preflight.Verdict, len(r.Verdicts))
	for i, v := range r.Verdicts {
		v.Message, v.Fix = apiWording.Replace(v.Message), apiWording.Replace(v.Fix)
		out.Verdicts[i] = v
	}
	return &out
}

// preflightForConsole rewords a preflight result.
func preflightForConsole(res installer.PreflightResult) installer.PreflightResult {
	if r := reportForConsole(&res.Report); r != nil {
		res.Report = *r
	}
	return res
}

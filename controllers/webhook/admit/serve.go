package admit

import (
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
)

// Env is what a kind's handlers are built from when the manager starts.
type Env struct {
	Manager ctrl.Manager
	setup.Deps
	// Kind reads the kind by its Webhooks' Name, with a decoder of the manager's scheme (none
	// without a manager); a handler sets the rest of the options it needs on its copy.
	Kind Kind
}

// Guard is the deletion protection guard of the manager's gates and API reader.
func (e Env) Guard() *deletionprotection.Guard { return deletionprotection.GuardFor(e.Manager, e.Deps) }

// Webhooks are one kind's admission handlers, served at the 1.8 paths its group, version and
// name make.
type Webhooks struct {
	// Group, Version and Name make the paths /mutate-<group with dashes>-<version>-<name> and
	// /validate-...; an empty Version leaves it out, for the kinds 1.8 serves unversioned, and
	// an empty Group too, for the core kinds (/mutate-pod).
	Group, Version, Name string
	// Mutating and Validating build the kind's defaulting and validating handlers; a nil one
	// is not served.
	Mutating, Validating func(Env) admission.Handler
}

// MutatingPath is the path the defaulting handler is served at.
func (w Webhooks) MutatingPath() string { return w.path("mutate") }

// ValidatingPath is the path the validating handler is served at.
func (w Webhooks) ValidatingPath() string { return w.path("validate") }

func (w Webhooks) path(verb string) string {
	parts := []string{verb}
	for _, p := range []string{strings.ReplaceAll(w.Group, ".", "-"), w.Version, w.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return "/" + strings.Join(parts, "-")
}

// Handlers builds the handlers by their paths: a setup.Webhooks.
func (w Webhooks) Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	e := Env{Manager: mgr, Deps: d, Kind: Kind{Name: w.Name}}
	if mgr != nil {
		e.Kind.Decoder = admission.NewDecoder(mgr.GetScheme())
	}
	hs := map[string]admission.Handler{}
	if w.Mutating != nil {
		hs[w.MutatingPath()] = w.Mutating(e)
	}
	if w.Validating != nil {
		hs[w.ValidatingPath()] = w.Validating(e)
	}
	return hs
}

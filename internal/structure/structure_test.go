package structure

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestDocPromisesHold checks every "must not import" promise of every doc.go in the module
// against its import graph, in the grammar the package comment defines.
func TestDocPromisesHold(t *testing.T) {
	g, err := Load(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	promises, problems, err := g.CheckDocs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if promises == 0 {
		t.Error("no doc.go promises anything; the extractor reads none")
	}
	t.Logf("%d promises checked against %d packages of the module", promises, len(g.Dirs))
}

func TestExtract(t *testing.T) {
	type tcase struct {
		doc  string
		want []Promise
	}
	tests := map[string]tcase{
		"backquoted patterns after the words are what the package must not import": {
			doc: "It imports apis/. It must not import `controllers/manager` or `helm.sh/helm/v3/pkg/action`.",
			want: []Promise{{Clause: "must not import `controllers/manager` or `helm.sh/helm/v3/pkg/action`.",
				Forbid: []Pattern{"controllers/manager", "helm.sh/helm/v3/pkg/action"}}},
		},
		"patterns after other than are exceptions": {
			doc: "It must not import a controller (`controllers/...` other than `controllers/internal/...` and `controllers/setup`).",
			want: []Promise{{Clause: "must not import a controller (`controllers/...` other than `controllers/internal/...` and `controllers/setup`).",
				Forbid: []Pattern{"controllers/..."}, Except: []Pattern{"controllers/internal/...", "controllers/setup"}}},
		},
		"the clause ends at a semicolon or colon and the patterns of what follows do not count": {
			doc: "It must not import `installer/...`; it imports `apis/kinds`. It must not import `daemon/...`: the daemon imports it.",
			want: []Promise{
				{Clause: "must not import `installer/...`;", Forbid: []Pattern{"installer/..."}},
				{Clause: "must not import `daemon/...`:", Forbid: []Pattern{"daemon/..."}},
			},
		},
		"a promise may break across comment lines and dots inside backquotes do not end it": {
			doc:  "It must not\nimport `sigs.k8s.io/controller-runtime/...`. Then more.",
			want: []Promise{{Clause: "must not import `sigs.k8s.io/controller-runtime/...`.", Forbid: []Pattern{"sigs.k8s.io/controller-runtime/..."}}},
		},
		"a clause that says directly counts only the package's own imports": {
			doc: "It must not import Helm's action package (`helm.sh/helm/v3/pkg/action`) directly.",
			want: []Promise{{Clause: "must not import Helm's action package (`helm.sh/helm/v3/pkg/action`) directly.",
				Forbid: []Pattern{"helm.sh/helm/v3/pkg/action"}, Direct: true}},
		},
		"quoted words and code blocks promise nothing": {
			doc:  "A promise starts at the words \"must not import\" and ends.\n\tIt must not import `x/y`.\nThe rest.",
			want: nil,
		},
		"a promise without backquotes names no pattern": {
			doc:  "It Must Not Import the manager.",
			want: []Promise{{Clause: "Must Not Import the manager."}},
		},
		"a comment without the words makes no promise": {
			doc:  "It imports apis/ only.",
			want: nil,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "Extract", tt.want, Extract(tt.doc))
	})
}

func TestOtherWording(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"never imports is a promise in other words", "apis/ never imports them.", []string{"never imports"}},
		{"imports no is a promise in other words", "It imports no controller package.", []string{"imports no"}},
		{"must not import is the promise's own wording", "It must not import `daemon/...`.", nil},
		{"what imports a package is no promise of its own", "It is imported only by tests.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Diff(t, "OtherWording", tt.want, OtherWording(tt.doc))
		})
	}
}

func TestCheck(t *testing.T) {
	const m = "example.com/addon"
	// A small module: a controller that reaches the manager through a helper, and the
	// manager importing Helm.
	graph := &Graph{Module: m, Imports: map[string][]string{
		m + "/controllers/cloneset":                  {m + "/controllers/internal/revision", m + "/controllers/setup", m + "/controllers/helper"},
		m + "/controllers/helper":                    {m + "/controllers/manager"},
		m + "/controllers/internal/revision":         {"k8s.io/api/core/v1"},
		m + "/controllers/setup":                     {"sigs.k8s.io/controller-runtime/pkg/manager"},
		m + "/controllers/manager":                   {m + "/controllers/setup", "helm.sh/helm/v3/pkg/action"},
		"helm.sh/helm/v3/pkg/action":                 nil,
		"k8s.io/api/core/v1":                         nil,
		"sigs.k8s.io/controller-runtime/pkg/manager": nil,
	}}
	type tcase struct {
		pkg     string
		promise string
		want    []string
	}
	tests := map[string]tcase{
		"a package that reaches a forbidden one through another breaks the promise, with the chain named": {
			pkg:     m + "/controllers/cloneset",
			promise: "It must not import `controllers/manager`.",
			want:    []string{"controllers/cloneset must not import `controllers/manager`, but imports controllers/cloneset -> controllers/helper -> controllers/manager"},
		},
		"an external pattern is broken transitively too": {
			pkg:     m + "/controllers/cloneset",
			promise: "It must not import `helm.sh/...`.",
			want:    []string{"controllers/cloneset must not import `helm.sh/...`, but imports controllers/cloneset -> controllers/helper -> controllers/manager -> helm.sh/helm/v3/pkg/action"},
		},
		"the excepted packages do not break a subtree pattern, the others do": {
			pkg:     m + "/controllers/cloneset",
			promise: "It must not import `controllers/...` other than `controllers/internal/...` and `controllers/setup`.",
			want:    []string{"controllers/cloneset must not import `controllers/...`, but imports controllers/cloneset -> controllers/helper"},
		},
		"a package that reaches none of the patterns keeps the promise": {
			pkg:     m + "/controllers/manager",
			promise: "It must not import `controllers/cloneset` or `controllers/internal/...`.",
			want:    nil,
		},
		"a promise that says directly is kept by a package that reaches the pattern only through another": {
			pkg:     m + "/controllers/cloneset",
			promise: "It must not import `controllers/manager` directly.",
			want:    nil,
		},
		"a promise that says directly is broken by the package's own import": {
			pkg:     m + "/controllers/helper",
			promise: "It must not import `controllers/manager` directly.",
			want:    []string{"controllers/helper must not import `controllers/manager`, but imports controllers/helper -> controllers/manager"},
		},
		"the whole module pattern leaves out the package itself": {
			pkg:     m + "/controllers/internal/revision",
			promise: "It must not import any package of the add-on (`...`).",
			want:    nil,
		},
		"a promise without a pattern cannot be checked": {
			pkg:     m + "/controllers/setup",
			promise: "It must not import the manager.",
			want:    []string{"controllers/setup: \"must not import the manager.\" names no backquoted package it forbids; write the packages as `dir/pkg` or `dir/...`"},
		},
		"a pattern that names no package is a typo, not a kept promise": {
			pkg:     m + "/controllers/setup",
			promise: "It must not import `controller/manager` or `controllers/` other than `controllers/nothing/...`.",
			want: []string{
				"controllers/setup: pattern `controller/manager` names no package the module builds; correct it or drop it",
				"controllers/setup: pattern `controllers/` is no package path: write `dir/pkg` for one package, `dir/...` for a subtree",
				"controllers/setup: pattern `controllers/nothing/...` names no package the module builds; correct it or drop it",
			},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		promises := Extract(tt.promise)
		if len(promises) != 1 {
			t.Fatalf("Extract(%q) = %d promises, want 1", tt.promise, len(promises))
		}
		testkit.Diff(t, "Check", tt.want, graph.Check(tt.pkg, promises[0]))
	})
}

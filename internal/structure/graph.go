package structure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Graph is the module's import graph: every package of the module and everything they import,
// directly or not.
type Graph struct {
	// Module is the module's path.
	Module string
	// Imports maps an import path to the import paths it imports. A test suite (a package
	// whose only file besides its tests is doc.go) imports what its tests import; every other
	// package, what its non-test files import.
	Imports map[string][]string
	// Dirs maps each package of the module to its folder.
	Dirs map[string]string
}

// listed is the part of `go list -json` that Load reads.
type listed struct {
	ImportPath, Dir string
	Module          *struct{ Main bool }
	GoFiles         []string
	Imports         []string
	TestImports     []string
	XTestImports    []string
}

// listFields are the fields Load asks `go list -json` for.
const listFields = "-json=ImportPath,Dir,Module,GoFiles,Imports,TestImports,XTestImports"

// Load lists the import graph of the module in dir with the go command. The e2e build tag is
// set, so that the end-to-end suite's tests are read.
func Load(ctx context.Context, dir string) (*Graph, error) {
	out, err := goCommand(ctx, dir, "list", "-m", "-f", "{{.Path}}\t{{.Dir}}")
	if err != nil {
		return nil, err
	}
	module, root, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	g := &Graph{Module: module, Imports: map[string][]string{}, Dirs: map[string]string{}}
	pkgs, err := goList(ctx, root, "./...")
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, p := range pkgs {
		g.add(p)
		if g.Dirs[p.ImportPath] == "" {
			continue
		}
		if slices.Equal(p.GoFiles, []string{"doc.go"}) {
			suite := slices.Concat(p.TestImports, p.XTestImports)
			suite = slices.DeleteFunc(suite, func(s string) bool { return s == p.ImportPath })
			slices.Sort(suite)
			g.Imports[p.ImportPath] = slices.Compact(suite)
			missing = append(missing, suite...)
		}
	}
	missing = slices.DeleteFunc(missing, func(s string) bool { _, ok := g.Imports[s]; return ok })
	if len(missing) > 0 {
		more, err := goList(ctx, root, slices.Compact(slices.Sorted(slices.Values(missing)))...)
		if err != nil {
			return nil, err
		}
		for _, p := range more {
			if _, ok := g.Imports[p.ImportPath]; !ok {
				g.add(p)
			}
		}
	}
	return g, nil
}

func (g *Graph) add(p listed) {
	g.Imports[p.ImportPath] = p.Imports
	if p.Module != nil && p.Module.Main {
		g.Dirs[p.ImportPath] = p.Dir
	}
}

// goList lists the packages the patterns name and every package they import.
func goList(ctx context.Context, dir string, patterns ...string) ([]listed, error) {
	out, err := goCommand(ctx, dir, append([]string{"list", "-deps", "-tags", "e2e", listFields}, patterns...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// Rel is an import path as the promises write it: relative to the module for its packages.
func (g *Graph) Rel(pkg string) string {
	if pkg == g.Module {
		return "."
	}
	return strings.TrimPrefix(pkg, g.Module+"/")
}

// Check returns how pkg breaks the promise, one line per broken pattern naming the import
// chain found first (a shortest one), and what is wrong with the promise itself: no pattern,
// a pattern written wrong, or one that names no package of the graph.
func (g *Graph) Check(pkg string, p Promise) []string {
	var problems []string
	if len(p.Forbid) == 0 {
		problems = append(problems, fmt.Sprintf("%s: %q names no backquoted package it forbids; write the packages as `dir/pkg` or `dir/...`", g.Rel(pkg), p.Clause))
	}
	for _, pat := range slices.Concat(p.Forbid, p.Except) {
		if err := pat.Validate(); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", g.Rel(pkg), err))
		} else if !g.names(pat) {
			problems = append(problems, fmt.Sprintf("%s: pattern `%s` names no package the module builds; correct it or drop it", g.Rel(pkg), pat))
		}
	}
	if len(problems) > 0 {
		return problems
	}
	order, parent := g.reach(pkg, p.Direct)
	for _, pat := range p.Forbid {
		for _, dep := range order {
			if pat.Matches(g.Module, dep) && !slices.ContainsFunc(p.Except, func(e Pattern) bool { return e.Matches(g.Module, dep) }) {
				problems = append(problems, fmt.Sprintf("%s must not import `%s`, but imports %s", g.Rel(pkg), pat, g.chain(dep, parent)))
				break
			}
		}
	}
	return problems
}

// names tells whether any package of the graph matches the pattern.
func (g *Graph) names(pat Pattern) bool {
	for pkg := range g.Imports {
		if pat.Matches(g.Module, pkg) {
			return true
		}
	}
	return false
}

// reach walks the imports of pkg breadth first, in the order each package lists them, and
// returns every package reached (pkg excluded) with the package each was first reached from.
// With direct it stops at pkg's own imports.
func (g *Graph) reach(pkg string, direct bool) (order []string, parent map[string]string) {
	parent = map[string]string{pkg: ""}
	for queue := []string{pkg}; len(queue) > 0; queue = queue[1:] {
		if direct && queue[0] != pkg {
			break
		}
		for _, dep := range g.Imports[queue[0]] {
			if _, seen := parent[dep]; !seen {
				parent[dep] = queue[0]
				order = append(order, dep)
				queue = append(queue, dep)
			}
		}
	}
	return order, parent
}

// chain is the import chain from the walk's start to dep, as "a -> b -> dep".
func (g *Graph) chain(dep string, parent map[string]string) string {
	var links []string
	for p := dep; p != ""; p = parent[p] {
		links = append(links, g.Rel(p))
	}
	slices.Reverse(links)
	return strings.Join(links, " -> ")
}

// CheckDocs reads the package comment of every doc.go in the module and checks each promise
// against the graph. It returns how many promises it read and every problem: a broken promise,
// a promise that cannot be checked, or a promise in other words than "must not import".
func (g *Graph) CheckDocs() (promises int, problems []string, err error) {
	for _, pkg := range slices.Sorted(maps.Keys(g.Dirs)) {
		path := filepath.Join(g.Dirs[pkg], "doc.go")
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return 0, nil, fmt.Errorf("read the package comment: %w", err)
		}
		doc := f.Doc.Text()
		for _, words := range OtherWording(doc) {
			problems = append(problems, fmt.Sprintf("%s/doc.go says %q: write the promise as \"must not import `dir/pkg`\" so that it is checked", g.Rel(pkg), words))
		}
		for _, p := range Extract(doc) {
			promises++
			problems = append(problems, g.Check(pkg, p)...)
		}
	}
	return promises, problems, nil
}

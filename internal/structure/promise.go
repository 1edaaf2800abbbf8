package structure

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Promise is one "must not import" clause of a package comment.
type Promise struct {
	// Clause is the promise as written, from "must not import" to the end of its clause.
	Clause string
	// Forbid holds the backquoted patterns before "other than".
	Forbid []Pattern
	// Except holds the backquoted patterns after "other than".
	Except []Pattern
	// Direct is set when the clause says "directly": only the package's own imports count.
	Direct bool
}

// Pattern names packages: a path relative to the module (controllers/manager), or an import
// path when its first element holds a dot (helm.sh/helm/v3/pkg/action). A trailing "/..."
// takes the package and every package below it; "..." alone is the whole module.
type Pattern string

const (
	promiseWords = "must not import"
	exceptWords  = "other than"
)

// directWord, as a word of a clause outside backquotes, limits the promise to direct imports.
var directWord = regexp.MustCompile(`(?i)\bdirectly\b`)

// otherWording finds promises written in a form Extract does not read, so that they are
// reworded rather than left unchecked.
var otherWording = regexp.MustCompile(`(?i)\b(never imports?|imports? no|imports? nothing|imports? none)\b`)

// Extract returns the promises of a package comment, in order. Code blocks (lines indented
// with a tab) are examples, and words in double quotes are quoted: neither promises anything.
func Extract(doc string) []Promise {
	text := prose(doc)
	lower := strings.ToLower(text)
	var promises []Promise
	for from := 0; ; {
		i := strings.Index(lower[from:], promiseWords)
		if i < 0 {
			return promises
		}
		start := from + i
		from = start + len(promiseWords)
		if quoted(text, start) {
			continue
		}
		promises = append(promises, parseClause(text[start:clauseEnd(text, start)]))
	}
}

// OtherWording returns the phrases of a package comment that promise what a package does not
// import in words Extract does not read.
func OtherWording(doc string) []string {
	text := prose(doc)
	var found []string
	for _, at := range otherWording.FindAllStringIndex(text, -1) {
		if !quoted(text, at[0]) {
			found = append(found, text[at[0]:at[1]])
		}
	}
	return found
}

// prose is the comment without its code blocks, on one line with single spaces.
func prose(doc string) string {
	lines := strings.Split(doc, "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "\t") })
	return strings.Join(strings.Fields(strings.Join(lines, "\n")), " ")
}

// quoted tells whether the words at i open a double-quoted phrase.
func quoted(text string, i int) bool {
	return i > 0 && text[i-1] == '"'
}

// clauseEnd is the index just past the clause that starts at start: its first '.', ';' or ':'
// outside backquotes that ends the text or is followed by a space.
func clauseEnd(text string, start int) int {
	quoted := false
	for i := start; i < len(text); i++ {
		switch c := text[i]; {
		case c == '`':
			quoted = !quoted
		case quoted:
		case c == '.' || c == ';' || c == ':':
			if i+1 == len(text) || text[i+1] == ' ' {
				return i + 1
			}
		}
	}
	return len(text)
}

func parseClause(clause string) Promise {
	p := Promise{Clause: clause}
	except := false
	outside := strings.Split(clause, "`")
	for i, part := range outside {
		if i%2 == 0 {
			except = except || strings.Contains(strings.ToLower(part), exceptWords)
			p.Direct = p.Direct || directWord.MatchString(part)
			continue
		}
		if except {
			p.Except = append(p.Except, Pattern(part))
		} else {
			p.Forbid = append(p.Forbid, Pattern(part))
		}
	}
	return p
}

// Validate tells what is wrong with the way a pattern is written.
func (p Pattern) Validate() error {
	s := string(p)
	if s == "..." {
		return nil
	}
	rest := strings.TrimSuffix(s, "/...")
	if rest == "" || strings.ContainsAny(rest, " \t") || strings.Contains(rest, "...") ||
		strings.HasPrefix(rest, "/") || strings.HasSuffix(rest, "/") || strings.HasPrefix(rest, ".") {
		return fmt.Errorf("pattern `%s` is no package path: write `dir/pkg` for one package, `dir/...` for a subtree", s)
	}
	return nil
}

// ImportPath is the import path the pattern names within module, and whether it takes the
// packages below that path too.
func (p Pattern) ImportPath(module string) (path string, subtree bool) {
	s := string(p)
	if s == "..." {
		return module, true
	}
	path, subtree = strings.CutSuffix(s, "/...")
	if first, _, _ := strings.Cut(path, "/"); !strings.Contains(first, ".") {
		path = module + "/" + path
	}
	return path, subtree
}

// Matches tells whether the package with import path pkg is one the pattern names.
func (p Pattern) Matches(module, pkg string) bool {
	path, subtree := p.ImportPath(module)
	return pkg == path || subtree && strings.HasPrefix(pkg, path+"/")
}

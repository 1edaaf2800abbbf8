package integration

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// subsetDiff reports every leaf of want that is absent from got or differs there. Lists must
// keep their length and are compared element by element, so a pruned or renamed field anywhere
// in a manifest shows up as a path.
func subsetDiff(want, got any) []string {
	var diffs []string
	walkSubset(normalize(want), normalize(got), "", &diffs)
	sort.Strings(diffs)
	return diffs
}

func walkSubset(want, got any, path string, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: want an object, got %v", orRoot(path), got))
			return
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: missing (pruned or renamed)", path, k))
				continue
			}
			walkSubset(wv, gv, path+"."+k, diffs)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %d items, got %v", orRoot(path), len(w), got))
			return
		}
		for i := range w {
			walkSubset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), diffs)
		}
	default:
		if !reflect.DeepEqual(want, got) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %v, got %v", orRoot(path), want, got))
		}
	}
}

// normalize round-trips a value through JSON so that numbers from YAML and from the server
// compare equal.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

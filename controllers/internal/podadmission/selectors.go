package podadmission

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Selectors remembers the label selectors of cached objects parsed, so that a step comparing
// every pod with every SidecarSet of its namespace parses each selector once per spec rather
// than once per pod: parsing validates every key and value and was a fifth of /mutate-pod's CPU
// with 100 SidecarSets. An entry is keyed by the object's UID and the selector's field, and
// holds for the object's generation, which the apiserver bumps on every change of spec; an
// object of generation 0 (never stored) is parsed every time. The zero value is ready to use and
// safe for concurrent use, and a nil one parses every time; the parsed selectors it hands out
// are shared and read-only.
type Selectors struct {
	mu sync.Mutex
	m  map[selectorKey]parsedSelector
}

// selectorsMax bounds the entries: when full it starts over, which costs a parse per selector
// and drops the entries of deleted objects.
const selectorsMax = 1 << 14

type selectorKey struct {
	uid   types.UID
	field string
}

type parsedSelector struct {
	generation int64
	sel        labels.Selector
	err        error
}

// Of returns sel, the selector held in field of obj, parsed as metav1.LabelSelectorAsSelector
// parses it (nil gives labels.Nothing, an empty one labels.Everything).
func (s *Selectors) Of(obj metav1.Object, field string, sel *metav1.LabelSelector) (labels.Selector, error) {
	gen := obj.GetGeneration()
	if s == nil || gen == 0 || obj.GetUID() == "" {
		return metav1.LabelSelectorAsSelector(sel)
	}
	key := selectorKey{uid: obj.GetUID(), field: field}
	s.mu.Lock()
	p, ok := s.m[key]
	s.mu.Unlock()
	if ok && p.generation == gen {
		return p.sel, p.err
	}
	parsed, err := metav1.LabelSelectorAsSelector(sel)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= selectorsMax {
		s.m = map[selectorKey]parsedSelector{}
	}
	s.m[key] = parsedSelector{generation: gen, sel: parsed, err: err}
	return parsed, err
}

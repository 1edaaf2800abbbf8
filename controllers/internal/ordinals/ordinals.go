package ordinals

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Max bounds ordinals: a pod name's ordinal fits an int32, as the workload's replicas do.
const Max = 1<<31 - 1

// span is a closed range of ordinals.
type span struct{ from, to int }

func (s span) size() int { return s.to - s.from + 1 }

// Reserved is the set of reserved ordinals, kept as sorted, merged spans so that a range such as
// "0-1000000000" costs two ints and not a billion.
type Reserved []span

// ParseReserved reads spec.reserveOrdinals: ints ("3" or 3) and ranges "a-b" with a <= b, none
// negative or above Max. Every bad entry is reported, naming its index; the good ones are
// returned all the same.
func ParseReserved(list []intstr.IntOrString, path *field.Path) (Reserved, field.ErrorList) {
	var errs field.ErrorList
	var spans []span
	for i, v := range list {
		p := path.Index(i)
		if v.Type == intstr.Int {
			if v.IntVal < 0 {
				errs = append(errs, field.Invalid(p, v.IntVal, "must be a non-negative ordinal or a range \"a-b\" of them"))
				continue
			}
			spans = append(spans, span{int(v.IntVal), int(v.IntVal)})
			continue
		}
		s, err := parseSpan(v.StrVal)
		if err != nil {
			errs = append(errs, field.Invalid(p, v.StrVal, err.Error()))
			continue
		}
		spans = append(spans, s)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var out Reserved
	for _, s := range spans {
		if n := len(out); n > 0 && s.from <= out[n-1].to+1 {
			out[n-1].to = max(out[n-1].to, s.to)
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

func parseSpan(v string) (span, error) {
	const valid = "must be a non-negative ordinal such as \"3\" or a range \"a-b\" with a <= b, such as \"3-5\""
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		return n, err == nil && n >= 0 && n <= Max
	}
	a, b, isRange := strings.Cut(v, "-")
	from, ok := num(a)
	if !ok {
		return span{}, fmt.Errorf(valid)
	}
	if !isRange {
		return span{from, from}, nil
	}
	to, ok := num(b)
	if !ok || to < from {
		return span{}, fmt.Errorf(valid)
	}
	return span{from, to}, nil
}

// Set is the ordinals a StatefulSet's replicas take, ascending: the first replicas ordinals from
// start up that are not reserved, none above Max. Sets are made by New; the zero Set is empty.
type Set struct {
	start int
	// n is how many ordinals the set holds; last is the highest of them (start-1 when n is 0).
	n, last int
	// spans are the reserved spans at or above start, clipped to start; before[i] is how many
	// ordinals spans[:i] reserve, for i up to len(spans).
	spans  []span
	before []int
}

// New returns the set of replicas ordinals from start up that r does not reserve. It costs the
// spans of r, whatever replicas is.
func New(start, replicas int, r Reserved) Set {
	s := Set{start: start, last: start - 1, before: []int{0}}
	if start < 0 || start > Max || replicas <= 0 {
		return s
	}
	reserved := 0
	for _, sp := range r {
		if sp.to < start {
			continue
		}
		sp.from = max(sp.from, start)
		s.spans = append(s.spans, sp)
		reserved += sp.size()
		s.before = append(s.before, reserved)
	}
	s.n = min(replicas, Max-start+1-reserved)
	if s.n <= 0 {
		s.n = 0
		return s
	}
	// The highest ordinal is the n-th free one: start+n-1, pushed up by every span it reaches.
	s.last = start + s.n - 1
	for _, sp := range s.spans {
		if sp.from > s.last {
			break
		}
		s.last += sp.size()
	}
	return s
}

// Len is how many ordinals the set holds.
func (s Set) Len() int { return s.n }

// Index returns o's place in the set (0 for the lowest ordinal) and whether o is in it.
func (s Set) Index(o int) (int, bool) {
	if s.n == 0 || o < s.start || o > s.last {
		return 0, false
	}
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].to >= o })
	if i < len(s.spans) && s.spans[i].from <= o {
		return 0, false
	}
	return o - s.start - s.before[i], true
}

// Has reports whether o is in the set.
func (s Set) Has(o int) bool {
	_, ok := s.Index(o)
	return ok
}

// First returns, ascending, the first n ordinals of the set for which taken is false. It costs
// the ordinals it returns, those taken skipped on the way and the spans: at most n plus the
// taken ones, never the size of the set.
func (s Set) First(n int, taken func(o int) bool) []int {
	var out []int
	if n <= 0 || s.n == 0 {
		return out
	}
	j := 0
	for o := s.start; o <= s.last && len(out) < n; o++ {
		for j < len(s.spans) && s.spans[j].to < o {
			j++
		}
		if j < len(s.spans) && s.spans[j].from <= o {
			o = s.spans[j].to
			continue
		}
		if !taken(o) {
			out = append(out, o)
		}
	}
	return out
}

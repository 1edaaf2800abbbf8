package statefulset

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// span is a closed range of ordinals.
type span struct{ from, to int }

// reserved is the set of reserved ordinals, kept as sorted, merged spans so that a range such as
// "0-1000000000" costs two ints and not a billion.
type reserved []span

// maxOrdinal bounds ordinals: a pod name's ordinal fits an int32, as the workload's replicas do.
const maxOrdinal = 1<<31 - 1

// ParseReserveOrdinals reads spec.reserveOrdinals: ints ("3" or 3) and ranges "a-b" with a <= b,
// none negative. Every bad entry is reported, naming its index.
func ParseReserveOrdinals(list []intstr.IntOrString, path *field.Path) (reserved, field.ErrorList) {
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
	var out reserved
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
		return n, err == nil && n >= 0 && n <= maxOrdinal
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

// has reports whether ordinal o is reserved.
func (r reserved) has(o int) bool {
	i := sort.Search(len(r), func(i int) bool { return r[i].to >= o })
	return i < len(r) && r[i].from <= o
}

// desiredOrdinals returns the replicas ordinals the StatefulSet's pods take, ascending: from
// start up, skipping reserved ones. It is pure, and its cost does not depend on how wide the
// reserved ranges are.
func desiredOrdinals(start, replicas int, r reserved) []int {
	out := make([]int, 0, replicas)
	o := start
	j := sort.Search(len(r), func(i int) bool { return r[i].to >= o })
	for len(out) < replicas && o <= maxOrdinal {
		if j < len(r) && r[j].from <= o {
			o = r[j].to + 1
			j++
			continue
		}
		out = append(out, o)
		o++
	}
	return out
}

// ordinalOf returns the ordinal of a pod named <set>-<ordinal>, or false when the pod's name is
// not of that form.
func ordinalOf(set, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > maxOrdinal || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// podName is the name of the pod with ordinal o.
func podName(set string, o int) string { return set + "-" + strconv.Itoa(o) }

// claimName is the name of the PVC that volume claim template tmpl gives the pod with ordinal o.
func claimName(tmpl, set string, o int) string { return tmpl + "-" + podName(set, o) }

package fieldrule

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Enum refuses v at p unless it is one of allowed, listing them.
func Enum[T ~string](p *field.Path, v T, allowed ...T) field.ErrorList {
	if slices.Contains(allowed, v) {
		return nil
	}
	valid := make([]string, len(allowed))
	for i, a := range allowed {
		valid[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(p, v, valid)}
}

// Unique refuses name at p when valid finds fault with it (one error a message) or when seen
// holds it already, and adds it to seen: for the names of a list that must differ.
func Unique(p *field.Path, name string, seen sets.Set[string], valid func(string) []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range valid(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(p, name))
	}
	seen.Insert(name)
	return errs
}

// ExactlyOne says whether exactly one of the fields a and b is set; when neither is, it adds a
// Required error on a to errs, and when both are, a Forbidden error on b.
func ExactlyOne(errs *field.ErrorList, a *field.Path, hasA bool, b *field.Path, hasB bool) bool {
	switch {
	case !hasA && !hasB:
		*errs = append(*errs, field.Required(a, fmt.Sprintf("one of %s and %s is required", a, b)))
	case hasA && hasB:
		*errs = append(*errs, field.Forbidden(b, fmt.Sprintf("%s and %s are mutually exclusive; set only one", a, b)))
	default:
		return true
	}
	return false
}

// NonNegative refuses v at p when it is set and below 0: "must be 0 or more", then unit
// when given ("seconds", "pods"). An unset v passes.
func NonNegative[T int32 | int64](p *field.Path, v *T, unit string) field.ErrorList {
	if v == nil || *v >= 0 {
		return nil
	}
	msg := "must be 0 or more"
	if unit != "" {
		msg += " " + unit
	}
	return field.ErrorList{field.Invalid(p, *v, msg)}
}

// Positive refuses v at p when it is set and 0 or below: "must be a positive number of
// <unit>". An unset v passes.
func Positive[T int32 | int64](p *field.Path, v *T, unit string) field.ErrorList {
	if v == nil || *v > 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, *v, "must be a positive number of "+unit)}
}

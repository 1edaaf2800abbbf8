// Package fieldrule holds the small field rules the kinds' validations share, each returning
// errors that name the field and say what would be valid: Enum (one of a fixed set of values),
// Unique (valid names that differ across a list), ExactlyOne (one of two fields, not both,
// not neither) and NonNegative / Positive (an optional count of 0 or more, or above 0).
//
// It is a leaf: it imports only k8s.io/apimachinery.
package fieldrule

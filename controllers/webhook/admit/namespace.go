package admit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNamespace checks that an admission request names a namespace and that the object, if
// it names one, names the same. A handler that reads other objects (pods, secrets) reads them
// only in that namespace, so a caller of the webhook port cannot use it to probe another one.
func ValidateNamespace(requested, object string) field.ErrorList {
	p := field.NewPath("metadata", "namespace")
	switch {
	case requested == "":
		return field.ErrorList{field.Required(p, "the admission request must name the object's namespace")}
	case object != "" && object != requested:
		return field.ErrorList{field.Invalid(p, object, fmt.Sprintf("must be the namespace of the admission request, %q", requested))}
	}
	return nil
}

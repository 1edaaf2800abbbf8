package register

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Version returns the group version group/version and a scheme builder for its kinds.
func Version(group, version string) (schema.GroupVersion, *scheme.Builder) {
	gv := schema.GroupVersion{Group: group, Version: version}
	return gv, &scheme.Builder{GroupVersion: gv}
}

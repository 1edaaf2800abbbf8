// Package v1alpha1 holds the apps.kruise.io/v1alpha1 API: the enhanced workloads, jobs and node operations.
//
// It imports only Kubernetes API packages, apis/apps/pub and apis/register; controllers import
// it, never the other way round.
//
// +kubebuilder:object:generate=true
// +groupName=apps.kruise.io
package v1alpha1

import (
	"github.com/kruise-addon/kruise-addon/apis/register"
)

var (
	// GroupVersion is the group and version of every kind in this package, and SchemeBuilder
	// registers them.
	GroupVersion, SchemeBuilder = register.Version("apps.kruise.io", "v1alpha1")

	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Package v1alpha1 holds the policy.kruise.io/v1alpha1 API: PodUnavailableBudget.
//
// It imports only Kubernetes API packages, apis/apps/pub and apis/register; controllers import
// it, never the other way round.
//
// +kubebuilder:object:generate=true
// +groupName=policy.kruise.io
package v1alpha1

import (
	"github.com/kruise-addon/kruise-addon/apis/register"
)

var (
	// GroupVersion is the group and version of every kind in this package, and SchemeBuilder
	// registers them.
	GroupVersion, SchemeBuilder = register.Version("policy.kruise.io", "v1alpha1")

	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

package resourcedistribution

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
)

// supportedKinds are the kinds spec.resource may be, all of apiVersion v1.
var supportedKinds = sets.New("Secret", "ConfigMap")

// validateResourceDistribution returns every rule rd breaks; old is the object being
// replaced on update (nil on create).
func validateResourceDistribution(rd, old *appsv1alpha1.ResourceDistribution) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateResource(rd, old, spec.Child("resource"))
	return append(errs, validateTargets(&rd.Spec.Targets, spec.Child("targets"))...)
}

func validateResource(rd, old *appsv1alpha1.ResourceDistribution, path *field.Path) field.ErrorList {
	obj, err := resourcedistribution.DecodeResource(rd.Spec.Resource.Raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error()+"; give a complete v1 Secret or ConfigMap")}
	}
	var errs field.ErrorList
	if obj.GetAPIVersion() != "v1" || !supportedKinds.Has(obj.GetKind()) {
		errs = append(errs, field.NotSupported(path.Child("kind"), obj.GetAPIVersion()+" "+obj.GetKind(), []string{"v1 Secret", "v1 ConfigMap"}))
	}
	if obj.GetName() == "" {
		errs = append(errs, field.Required(path.Child("metadata", "name"), "the name the copies get in each namespace"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(obj.GetName()) {
			errs = append(errs, field.Invalid(path.Child("metadata", "name"), obj.GetName(), msg))
		}
	}
	if old == nil {
		return errs
	}
	prev, err := resourcedistribution.DecodeResource(old.Spec.Resource.Raw)
	if err != nil {
		return errs
	}
	if prev.GetAPIVersion() != obj.GetAPIVersion() || prev.GetKind() != obj.GetKind() || prev.GetName() != obj.GetName() {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("apiVersion, kind and name are immutable: keep %s %s %q, or create another ResourceDistribution",
			prev.GetAPIVersion(), prev.GetKind(), prev.GetName())))
	}
	return errs
}

func validateTargets(t *appsv1alpha1.ResourceDistributionTargets, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	included := sets.New[string]()
	for i, n := range t.IncludedNamespaces.List {
		included.Insert(n.Name)
		errs = append(errs, validateNamespaceName(n.Name, path.Child("includedNamespaces", "list").Index(i).Child("name"))...)
	}
	var both []string
	for i, n := range t.ExcludedNamespaces.List {
		errs = append(errs, validateNamespaceName(n.Name, path.Child("excludedNamespaces", "list").Index(i).Child("name"))...)
		if included.Has(n.Name) {
			both = append(both, n.Name)
		}
	}
	if len(both) > 0 {
		errs = append(errs, field.Invalid(path.Child("excludedNamespaces"), strings.Join(both, ","),
			"a namespace cannot be both included and excluded; remove it from one of the lists"))
	}
	if _, err := metav1.LabelSelectorAsSelector(&t.NamespaceLabelSelector); err != nil {
		errs = append(errs, field.Invalid(path.Child("namespaceLabelSelector"), t.NamespaceLabelSelector, err.Error()))
	}
	return errs
}

func validateNamespaceName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "a namespace name")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

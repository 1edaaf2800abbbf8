package persistentpodstate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
)

// validatePersistentPodState returns every rule pps breaks; others are the PersistentPodStates
// of its namespace, old the object being replaced on update (nil on create), custom the
// whitelisted StatefulSet-like workloads a targetRef may name besides the StatefulSets.
func validatePersistentPodState(pps, old *appsv1alpha1.PersistentPodState, others []appsv1alpha1.PersistentPodState, custom *workloadref.Whitelist) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateTargetRef(pps, others, custom, spec.Child("targetRef"))
	if old != nil && !restore.SameWorkload(old.Spec.TargetReference, pps.Spec.TargetReference) {
		errs = append(errs, field.Forbidden(spec.Child("targetRef"), "targetRef cannot change; create a new PersistentPodState for another workload"))
	}
	if pps.Spec.RequiredPersistentTopology == nil && len(pps.Spec.PreferredPersistentTopology) == 0 {
		errs = append(errs, field.Required(spec.Child("requiredPersistentTopology"),
			"set requiredPersistentTopology or preferredPersistentTopology: the node label keys to keep, e.g. topology.kubernetes.io/zone"))
	}
	if req := pps.Spec.RequiredPersistentTopology; req != nil {
		errs = append(errs, validateKeys(req.NodeTopologyKeys, spec.Child("requiredPersistentTopology", "nodeTopologyKeys"))...)
	}
	for i, p := range pps.Spec.PreferredPersistentTopology {
		path := spec.Child("preferredPersistentTopology").Index(i)
		if p.Weight < 1 || p.Weight > 100 {
			errs = append(errs, field.Invalid(path.Child("weight"), p.Weight, "must be 1 to 100, as a preferred node affinity weight"))
		}
		errs = append(errs, validateKeys(p.Preference.NodeTopologyKeys, path.Child("preference", "nodeTopologyKeys"))...)
	}
	seen := sets.New[string]()
	for i, a := range pps.Spec.PersistentPodAnnotations {
		errs = append(errs, fieldrule.Unique(spec.Child("persistentPodAnnotations").Index(i).Child("key"), a.Key, seen, validation.IsQualifiedName)...)
	}
	if p := pps.Spec.PersistentPodStateRetentionPolicy; p != "" && p != appsv1alpha1.PersistentPodStateRetentionPolicyWhenScaled && p != appsv1alpha1.PersistentPodStateRetentionPolicyWhenDeleted {
		errs = append(errs, field.NotSupported(spec.Child("persistentPodStateRetentionPolicy"), p, []string{"WhenScaled", "WhenDeleted"}))
	}
	return errs
}

func validateTargetRef(pps *appsv1alpha1.PersistentPodState, others []appsv1alpha1.PersistentPodState, custom *workloadref.Whitelist, path *field.Path) field.ErrorList {
	ref := pps.Spec.TargetReference
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "the name of the StatefulSet whose pods' state is kept"))
	}
	if !restore.Supported(ref.APIVersion, ref.Kind, custom) {
		errs = append(errs, field.NotSupported(path, ref.APIVersion+" "+ref.Kind, []string{"apps/v1 StatefulSet", "apps.kruise.io/v1beta1 StatefulSet", "apps.kruise.io/v1alpha1 StatefulSet",
			"a StatefulSet-like custom workload listed in " + workloadref.PersistentPodStateWhitelistKey + " of ConfigMap " + workloadref.ConfigMapName}))
	}
	for _, o := range others {
		if o.Name != pps.Name && o.DeletionTimestamp == nil && restore.SameWorkload(o.Spec.TargetReference, ref) {
			errs = append(errs, field.Invalid(path, ref.Name, fmt.Sprintf("PersistentPodState %s already targets this workload; a workload has one PersistentPodState", o.Name)))
			break
		}
	}
	return errs
}

func validateKeys(keys []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(keys) == 0 {
		errs = append(errs, field.Required(path, "at least one node label key, e.g. topology.kubernetes.io/zone"))
	}
	for i, k := range keys {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Index(i), k, msg))
		}
	}
	return errs
}

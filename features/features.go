package features

import (
	"fmt"
	"sort"

	"k8s.io/component-base/featuregate"
)

// The OpenKruise 1.8 gates. The comments say what turning a gate on does.
const (
	// KruiseDaemon runs the features that need kruise-daemon: image pulls, container restarts.
	KruiseDaemon featuregate.Feature = "KruiseDaemon"
	// PodWebhook serves the pod admission webhooks (SidecarSet injection among others).
	PodWebhook featuregate.Feature = "PodWebhook"
	// DaemonWatchingPod lets kruise-daemon watch the pods of its own node.
	DaemonWatchingPod featuregate.Feature = "DaemonWatchingPod"
	// CloneSetShortHash puts only the short revision hash into the pod label.
	CloneSetShortHash featuregate.Feature = "CloneSetShortHash"
	// KruisePodReadinessGate injects the KruisePodReady readiness gate into every created pod,
	// not only into pods of the add-on's workloads.
	KruisePodReadinessGate featuregate.Feature = "KruisePodReadinessGate"
	// PreDownloadImageForInPlaceUpdate makes CloneSet and StatefulSet pre-pull images for an
	// in-place update through ImagePullJobs.
	PreDownloadImageForInPlaceUpdate featuregate.Feature = "PreDownloadImageForInPlaceUpdate"
	// CloneSetPartitionRollback rolls pods back to the current revision when more pods are
	// updated than replicas minus partition.
	CloneSetPartitionRollback featuregate.Feature = "CloneSetPartitionRollback"
	// ResourcesDeletionProtection honours the policy.kruise.io/delete-protection label.
	ResourcesDeletionProtection featuregate.Feature = "ResourcesDeletionProtection"
	// PodUnavailableBudgetDeleteGate makes PodUnavailableBudget guard pod deletion and eviction.
	PodUnavailableBudgetDeleteGate featuregate.Feature = "PodUnavailableBudgetDeleteGate"
	// PodUnavailableBudgetUpdateGate makes PodUnavailableBudget guard in-place updates.
	PodUnavailableBudgetUpdateGate featuregate.Feature = "PodUnavailableBudgetUpdateGate"
	// WorkloadSpread runs WorkloadSpread.
	WorkloadSpread featuregate.Feature = "WorkloadSpread"
	// TemplateNoDefaults stops the webhooks from defaulting pod and PVC templates.
	TemplateNoDefaults featuregate.Feature = "TemplateNoDefaults"
	// InPlaceUpdateEnvFromMetadata updates a container in place when the labels or annotations
	// its env reads change.
	InPlaceUpdateEnvFromMetadata featuregate.Feature = "InPlaceUpdateEnvFromMetadata"
	// StatefulSetAutoDeletePVC honours persistentVolumeClaimRetentionPolicy on StatefulSets.
	StatefulSetAutoDeletePVC featuregate.Feature = "StatefulSetAutoDeletePVC"
	// SidecarSetPatchPodMetadataDefaultsAllowed lets SidecarSets patch pod metadata by default.
	SidecarSetPatchPodMetadataDefaultsAllowed featuregate.Feature = "SidecarSetPatchPodMetadataDefaultsAllowed"
	// SidecarTerminator stops sidecars once every main container of a Never/OnFailure pod exited.
	SidecarTerminator featuregate.Feature = "SidecarTerminator"
	// PodProbeMarkerGate runs PodProbeMarker (custom probes executed by kruise-daemon).
	PodProbeMarkerGate featuregate.Feature = "PodProbeMarkerGate"
	// PreDownloadImageForDaemonSetUpdate makes Advanced DaemonSet pre-pull images for an update.
	PreDownloadImageForDaemonSetUpdate featuregate.Feature = "PreDownloadImageForDaemonSetUpdate"
	// CloneSetEventHandlerOptimization leaves a CloneSet unqueued on a pod update that can change
	// neither its status nor its plan.
	CloneSetEventHandlerOptimization featuregate.Feature = "CloneSetEventHandlerOptimization"
	// PreparingUpdateAsUpdate counts CloneSet pods in PreparingUpdate as updated while scaling.
	PreparingUpdateAsUpdate featuregate.Feature = "PreparingUpdateAsUpdate"
	// ImagePullJobGate runs ImagePullJob.
	ImagePullJobGate featuregate.Feature = "ImagePullJobGate"
	// ResourceDistributionGate runs ResourceDistribution.
	ResourceDistributionGate featuregate.Feature = "ResourceDistributionGate"
	// DeletionProtectionForCRDCascadingGate protects CRDs whose custom resources still exist.
	DeletionProtectionForCRDCascadingGate featuregate.Feature = "DeletionProtectionForCRDCascadingGate"
	// EnhancedLivenessProbe moves the liveness probes of new pods annotated
	// apps.kruise.io/using-enhanced-liveness: "true" into an annotation, away from the kubelet.
	EnhancedLivenessProbe featuregate.Feature = "EnhancedLivenessProbe"
	// RecreatePodWhenChangeVCTInCloneSetGate recreates pods when a CloneSet's
	// volumeClaimTemplates change.
	RecreatePodWhenChangeVCTInCloneSetGate featuregate.Feature = "RecreatePodWhenChangeVCTInCloneSetGate"
	// StatefulSetStartOrdinal honours spec.ordinals.start on StatefulSets.
	StatefulSetStartOrdinal featuregate.Feature = "StatefulSetStartOrdinal"
	// PodIndexLabel sets the pod index as a pod label.
	PodIndexLabel featuregate.Feature = "PodIndexLabel"
	// EnableExternalCerts serves webhook certificates made by someone else instead of our own.
	EnableExternalCerts featuregate.Feature = "EnableExternalCerts"
	// StatefulSetAutoResizePVCGate resizes PVCs when volumeClaimTemplates grow.
	StatefulSetAutoResizePVCGate featuregate.Feature = "StatefulSetAutoResizePVCGate"
	// ForceDeleteTimeoutExpectationGate forgets the pod creations and deletions a CloneSet waited
	// past the five-minute expectation timeout for, and looks again ten seconds later, as 1.8
	// does. With the gate off 1.8's CloneSet waits on for ever; ours forgets them and acts at
	// once, so that no workload waits for ever.
	ForceDeleteTimeoutExpectationGate featuregate.Feature = "ForceDeleteTimeoutExpectationGate"
	// InPlaceWorkloadVerticalScaling resizes pod resources in place for CloneSet and StatefulSet.
	InPlaceWorkloadVerticalScaling featuregate.Feature = "InPlaceWorkloadVerticalScaling"
	// EnablePodProbeMarkerOnServerless hands PodProbeMarker probes to serverless platforms in a
	// pod annotation and marks virtual-kubelet pods from the conditions they report.
	EnablePodProbeMarkerOnServerless featuregate.Feature = "EnablePodProbeMarkerOnServerless"
)

// Specs returns every gate with its OpenKruise 1.8 default and stage. Each call returns a new map.
func Specs() map[featuregate.Feature]featuregate.FeatureSpec {
	alpha := featuregate.FeatureSpec{Default: false, PreRelease: featuregate.Alpha}
	beta := featuregate.FeatureSpec{Default: true, PreRelease: featuregate.Beta}
	return map[featuregate.Feature]featuregate.FeatureSpec{
		PodWebhook:                                beta,
		KruiseDaemon:                              beta,
		DaemonWatchingPod:                         beta,
		CloneSetShortHash:                         alpha,
		KruisePodReadinessGate:                    alpha,
		PreDownloadImageForInPlaceUpdate:          alpha,
		CloneSetPartitionRollback:                 alpha,
		ResourcesDeletionProtection:               {Default: false, PreRelease: featuregate.Beta},
		WorkloadSpread:                            beta,
		PodUnavailableBudgetDeleteGate:            beta,
		PodUnavailableBudgetUpdateGate:            alpha,
		TemplateNoDefaults:                        alpha,
		InPlaceUpdateEnvFromMetadata:              beta,
		StatefulSetAutoDeletePVC:                  beta,
		SidecarSetPatchPodMetadataDefaultsAllowed: alpha,
		SidecarTerminator:                         alpha,
		PodProbeMarkerGate:                        beta,
		PreDownloadImageForDaemonSetUpdate:        alpha,
		CloneSetEventHandlerOptimization:          alpha,
		PreparingUpdateAsUpdate:                   alpha,
		ImagePullJobGate:                          alpha,
		ResourceDistributionGate:                  alpha,
		DeletionProtectionForCRDCascadingGate:     alpha,
		EnhancedLivenessProbe:                     alpha,
		RecreatePodWhenChangeVCTInCloneSetGate:    alpha,
		StatefulSetStartOrdinal:                   alpha,
		PodIndexLabel:                             beta,
		EnableExternalCerts:                       alpha,
		StatefulSetAutoResizePVCGate:              alpha,
		ForceDeleteTimeoutExpectationGate:         alpha,
		InPlaceWorkloadVerticalScaling:            alpha,
		EnablePodProbeMarkerOnServerless:          alpha,
	}
}

// NewGate returns a new gate that knows every gate of Specs at its default.
func NewGate() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(Specs()); err != nil {
		// Specs is a constant table; Add fails only on a duplicate name in it.
		panic(fmt.Sprintf("feature gate table: %v", err))
	}
	return g
}

// impliedOff lists, per gate, the gates that cannot work while it is off.
func impliedOff() map[featuregate.Feature][]featuregate.Feature {
	return map[featuregate.Feature][]featuregate.Feature{
		PodWebhook: {KruisePodReadinessGate, PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate,
			WorkloadSpread, SidecarSetPatchPodMetadataDefaultsAllowed, EnhancedLivenessProbe,
			EnablePodProbeMarkerOnServerless},
		KruiseDaemon: {PreDownloadImageForInPlaceUpdate, DaemonWatchingPod, InPlaceUpdateEnvFromMetadata,
			PreDownloadImageForDaemonSetUpdate, PodProbeMarkerGate, SidecarTerminator, ImagePullJobGate,
			EnhancedLivenessProbe},
		ResourcesDeletionProtection: {DeletionProtectionForCRDCascadingGate},
	}
}

// ApplyDependencies settles the gates the way 1.8 does after the flags are parsed: a gate whose
// prerequisite is off is turned off, and pre-downloading images turns ImagePullJobGate on
// (unless KruiseDaemon is off, which wins). It returns the gates it changed, sorted.
func ApplyDependencies(g featuregate.MutableFeatureGate) ([]string, error) {
	set := map[string]bool{}
	if g.Enabled(PreDownloadImageForInPlaceUpdate) || g.Enabled(PreDownloadImageForDaemonSetUpdate) {
		if !g.Enabled(ImagePullJobGate) {
			set[string(ImagePullJobGate)] = true
		}
	}
	for gate, deps := range impliedOff() {
		if g.Enabled(gate) {
			continue
		}
		for _, d := range deps {
			if g.Enabled(d) || set[string(d)] {
				set[string(d)] = false
			}
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	if err := g.SetFromMap(set); err != nil {
		return nil, fmt.Errorf("apply gate dependencies: %w", err)
	}
	changed := make([]string, 0, len(set))
	for k, v := range set {
		changed = append(changed, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(changed)
	return changed, nil
}

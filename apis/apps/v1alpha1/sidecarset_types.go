package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// Labels, annotations and environment variables of the SidecarSet contract. The pod
// annotations are written by the injection webhook and the SidecarSet controller; their values
// are JSON unless said otherwise.
const (
	// SidecarSetCustomVersionLabel is a SidecarSet label copied onto the ControllerRevisions
	// of the SidecarSet. spec.injectionStrategy.revision.customVersion names a revision by
	// this label's value, so users can tag a release ("v2") and inject exactly that release.
	SidecarSetCustomVersionLabel = "apps.kruise.io/sidecarset-custom-version"

	// SidecarSetHashAnnotation is the pod annotation that maps each injected SidecarSet name
	// to the revision hash of the sidecars the pod runs, the time it was written and the
	// sidecar container names.
	SidecarSetHashAnnotation = "kruise.io/sidecarset-hash"

	// SidecarSetHashWithoutImageAnnotation is like SidecarSetHashAnnotation with a hash that
	// ignores container images; when only this hash is unchanged an in-place image update is
	// enough.
	SidecarSetHashWithoutImageAnnotation = "kruise.io/sidecarset-hash-without-image"

	// SidecarSetListAnnotation is the pod annotation listing, comma separated, the names of
	// the SidecarSets injected into the pod.
	SidecarSetListAnnotation = "kruise.io/sidecarset-injected-list"

	// SidecarsetInplaceUpdateStateKey is the pod annotation that records, per SidecarSet, the
	// state of an in-place sidecar update in progress (revision, start time and the previous
	// container statuses).
	SidecarsetInplaceUpdateStateKey = "kruise.io/sidecarset-inplace-update-state"

	// SidecarSetWorkingHotUpgradeContainer is the pod annotation that maps each hot-upgrade
	// sidecar name to the one of its two containers (name-1 or name-2) currently serving.
	SidecarSetWorkingHotUpgradeContainer = "kruise.io/sidecarset-working-hotupgrade-container"

	// SidecarSetVersionAnnotationPrefix starts the pod annotation, followed by a hot-upgrade
	// container name (e.g. version.sidecarset.kruise.io/envoy-1), holding that container's
	// version counter. The container reads it through SidecarSetVersionEnvKey.
	SidecarSetVersionAnnotationPrefix = "version.sidecarset.kruise.io/"

	// SidecarSetVersionAltAnnotationPrefix starts the pod annotation, followed by a
	// hot-upgrade container name, holding the version counter of the other container of the
	// pair. The container reads it through SidecarSetVersionAltEnvKey.
	SidecarSetVersionAltAnnotationPrefix = "versionalt.sidecarset.kruise.io/"

	// SidecarEnvKey is the environment variable, set to "true", that marks a container of a
	// pod as injected by a SidecarSet.
	SidecarEnvKey = "IS_INJECTED"

	// SidecarSetVersionEnvKey is the environment variable of a hot-upgrade container that
	// carries its own version counter.
	SidecarSetVersionEnvKey = "SIDECARSET_VERSION"

	// SidecarSetVersionAltEnvKey is the environment variable of a hot-upgrade container that
	// carries the version counter of the other container of the pair.
	SidecarSetVersionAltEnvKey = "SIDECARSET_VERSION_ALT"
)

// SidecarSetUpgradable is the pod condition the SidecarSet controller sets False while a
// pod's sidecars cannot be updated in place, and True otherwise.
const SidecarSetUpgradable corev1.PodConditionType = "SidecarSetUpgradable"

// SidecarSetSpec is the desired state of a SidecarSet.
//
// +kubebuilder:validation:XValidation:rule="(has(self.containers) && size(self.containers) > 0) || (has(self.initContainers) && size(self.initContainers) > 0)",message="spec.containers or spec.initContainers must list at least one container"
// +kubebuilder:validation:XValidation:rule="!(has(self.__namespace__) && size(self.__namespace__) > 0 && has(self.namespaceSelector))",message="spec.namespace and spec.namespaceSelector are mutually exclusive"
type SidecarSetSpec struct {
	// Selector picks the pods, at creation, that get the sidecars. It must not be empty.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Namespace limits injection to pods of this namespace. Empty means every namespace
	// (unless namespaceSelector is set). Cannot be used with namespaceSelector.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// NamespaceSelector limits injection to pods of the namespaces whose labels match.
	// Unset means every namespace. Cannot be used with namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// InitContainers are injected, in ascending order of name, into the init containers of
	// newly created pods; pods that already exist are not changed.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	InitContainers []SidecarContainer `json:"initContainers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// Containers are injected into the containers of selected pods and kept up to date by
	// the update strategy.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	Containers []SidecarContainer `json:"containers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// Volumes are added to selected pods for the sidecars to mount; a pod volume of the same
	// name is left as it is.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +patchMergeKey=name
	// +patchStrategy=merge
	Volumes []corev1.Volume `json:"volumes,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// UpdateStrategy tunes how sidecars of already injected pods are moved to a new revision.
	// +optional
	// +kubebuilder:default={}
	UpdateStrategy SidecarSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// InjectionStrategy tunes what is injected into newly created pods.
	// +optional
	InjectionStrategy SidecarSetInjectionStrategy `json:"injectionStrategy,omitempty"`

	// ImagePullSecrets are added to selected pods so the sidecar images can be pulled.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// RevisionHistoryLimit is how many old ControllerRevisions of the SidecarSet are kept,
	// for injection of a pinned revision and for rollback. Default 10.
	// +optional
	// +kubebuilder:default=10
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// PatchPodMetadata lists annotations written into selected pods at injection, and, with
	// the Overwrite or MergePatchJson policy, kept up to date by in-place updates.
	// +optional
	PatchPodMetadata []SidecarSetPatchPodMetadata `json:"patchPodMetadata,omitempty"`
}

// SidecarSetPatchPolicyType is how a SidecarSet writes pod metadata that may already exist.
// +kubebuilder:validation:Enum=Retain;Overwrite;MergePatchJson
type SidecarSetPatchPolicyType string

const (
	// SidecarSetRetainPatchPolicy keeps a value the pod already has; values are written at
	// injection only, never by an in-place update.
	SidecarSetRetainPatchPolicy SidecarSetPatchPolicyType = "Retain"
	// SidecarSetOverwritePatchPolicy replaces the pod's value, at injection and at in-place
	// updates.
	SidecarSetOverwritePatchPolicy SidecarSetPatchPolicyType = "Overwrite"
	// SidecarSetMergePatchJsonPatchPolicy treats the values as JSON objects and merges them
	// into the pod's value (a JSON merge patch), so several SidecarSets can each add their
	// own keys to one annotation.
	SidecarSetMergePatchJsonPatchPolicy SidecarSetPatchPolicyType = "MergePatchJson"
)

// SidecarSetPatchPodMetadata is metadata a SidecarSet writes into its pods.
type SidecarSetPatchPodMetadata struct {
	// Annotations are written into the pod. At least one is required.
	// +required
	// +kubebuilder:validation:MinProperties=1
	Annotations map[string]string `json:"annotations,omitempty"`

	// PatchPolicy is Retain, Overwrite or MergePatchJson. Default Retain.
	// +optional
	// +kubebuilder:default=Retain
	PatchPolicy SidecarSetPatchPolicyType `json:"patchPolicy,omitempty"`
}

// SidecarContainer is a container to inject, with the injection options. All fields of a
// pod container are accepted inline (name, image, command, env, volumeMounts, ...).
type SidecarContainer struct {
	// Container is the container to inject.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	corev1.Container `json:",inline"`

	// PodInjectPolicy puts the sidecar before (BeforeAppContainer) or after
	// (AfterAppContainer) the pod's own containers. When unset a container goes before the
	// app containers; the field has no effect on init containers.
	// +optional
	PodInjectPolicy PodInjectPolicyType `json:"podInjectPolicy,omitempty"`

	// UpgradeStrategy is how the sidecar is updated: ColdUpgrade (restart in place, the
	// default) or HotUpgrade (switch traffic between two containers).
	// +optional
	// +kubebuilder:default={}
	UpgradeStrategy SidecarContainerUpgradeStrategy `json:"upgradeStrategy,omitempty"`

	// ShareVolumePolicy, when enabled, mounts into the sidecar the volumeMounts of the pod's
	// other containers (not those of other sidecars). Default disabled.
	// +optional
	// +kubebuilder:default={}
	ShareVolumePolicy ShareVolumePolicy `json:"shareVolumePolicy,omitempty"`

	// ShareVolumeDevicePolicy, when enabled, likewise gives the sidecar the volumeDevices of
	// the pod's other containers. Unset means disabled.
	// +optional
	ShareVolumeDevicePolicy *ShareVolumePolicy `json:"shareVolumeDevicePolicy,omitempty"`

	// TransferEnv copies environment variables from another container of the pod into the
	// sidecar.
	// +optional
	TransferEnv []TransferEnvVar `json:"transferEnv,omitempty"`
}

// PodInjectPolicyType is where a sidecar goes among the pod's containers.
// +kubebuilder:validation:Enum=BeforeAppContainer;AfterAppContainer
type PodInjectPolicyType string

const (
	// BeforeAppContainerType puts the sidecar in front of the pod's own containers.
	BeforeAppContainerType PodInjectPolicyType = "BeforeAppContainer"
	// AfterAppContainerType appends the sidecar after the pod's own containers.
	AfterAppContainerType PodInjectPolicyType = "AfterAppContainer"
)

// ShareVolumePolicyType switches volume sharing on or off.
// +kubebuilder:validation:Enum=enabled;disabled
type ShareVolumePolicyType string

const (
	// ShareVolumePolicyEnabled shares the volumes.
	ShareVolumePolicyEnabled ShareVolumePolicyType = "enabled"
	// ShareVolumePolicyDisabled does not share the volumes.
	ShareVolumePolicyDisabled ShareVolumePolicyType = "disabled"
)

// ShareVolumePolicy says whether a sidecar shares the other containers' volumes.
type ShareVolumePolicy struct {
	// Type is enabled or disabled. Default disabled.
	// +optional
	// +kubebuilder:default=disabled
	Type ShareVolumePolicyType `json:"type,omitempty"`
}

// TransferEnvVar copies environment variables of another container into a sidecar.
type TransferEnvVar struct {
	// SourceContainerName is the pod container to copy from.
	// +optional
	SourceContainerName string `json:"sourceContainerName,omitempty"`

	// SourceContainerNameFrom reads the source container name from the pod itself:
	// metadata.name, metadata.labels['<key>'] or metadata.annotations['<key>'].
	// +optional
	SourceContainerNameFrom *SourceContainerNameSource `json:"sourceContainerNameFrom,omitempty"`

	// EnvName is one variable to copy.
	// +optional
	EnvName string `json:"envName,omitempty"`

	// EnvNames are several variables to copy.
	// +optional
	EnvNames []string `json:"envNames,omitempty"`
}

// SourceContainerNameSource points at pod metadata holding a container name.
type SourceContainerNameSource struct {
	// FieldRef selects the pod field: metadata.name, metadata.labels['<key>'] or
	// metadata.annotations['<key>'].
	// +optional
	FieldRef *corev1.ObjectFieldSelector `json:"fieldRef,omitempty"`
}

// SidecarContainerUpgradeType is how a sidecar is updated.
// +kubebuilder:validation:Enum=ColdUpgrade;HotUpgrade
type SidecarContainerUpgradeType string

const (
	// SidecarContainerColdUpgrade restarts the sidecar in place with the new spec; fits
	// stateless sidecars.
	SidecarContainerColdUpgrade SidecarContainerUpgradeType = "ColdUpgrade"
	// SidecarContainerHotUpgrade runs the sidecar as two containers (name-1 and name-2):
	// the new version starts in the idle one, takes over (by the container's postStart
	// hook), and the old one is switched to hotUpgradeEmptyImage. Fits proxies such as envoy.
	SidecarContainerHotUpgrade SidecarContainerUpgradeType = "HotUpgrade"
)

// SidecarContainerUpgradeStrategy is how a sidecar is updated.
type SidecarContainerUpgradeStrategy struct {
	// UpgradeType is ColdUpgrade or HotUpgrade. Default ColdUpgrade. It cannot be changed
	// for a container that already exists.
	// +optional
	// +kubebuilder:default=ColdUpgrade
	UpgradeType SidecarContainerUpgradeType `json:"upgradeType,omitempty"`

	// HotUpgradeEmptyImage is the image the idle container of a HotUpgrade pair runs: it must
	// accept the sidecar's command, args and probes but do no work. Required for HotUpgrade.
	// +optional
	HotUpgradeEmptyImage string `json:"hotUpgradeEmptyImage,omitempty"`
}

// SidecarSetInjectionStrategy tunes injection into new pods.
type SidecarSetInjectionStrategy struct {
	// Paused stops injection into newly created pods while true; pods already injected keep
	// their sidecars and are still updated. Default false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Revision injects a chosen earlier revision of the SidecarSet instead of the latest,
	// for a careful rollout of a new sidecar version.
	// +optional
	Revision *SidecarSetInjectRevision `json:"revision,omitempty"`
}

// SidecarSetInjectRevisionPolicy is when the pinned revision is injected.
// +kubebuilder:validation:Enum=Always;Partial
type SidecarSetInjectRevisionPolicy string

const (
	// AlwaysSidecarSetInjectRevisionPolicy injects the pinned revision into every new pod,
	// except pods matched by updateStrategy.selector, which get the latest one.
	AlwaysSidecarSetInjectRevisionPolicy SidecarSetInjectRevisionPolicy = "Always"
	// PartialSidecarSetInjectRevisionPolicy injects the pinned revision only into new pods
	// the update strategy would not update: pods not matched by an explicit
	// updateStrategy.selector, or, by chance, a share equal to updateStrategy.partition when
	// it is a percentage (0% otherwise). The others get the latest revision.
	PartialSidecarSetInjectRevisionPolicy SidecarSetInjectRevisionPolicy = "Partial"
)

// SidecarSetInjectRevision names the revision to inject; set revisionName or customVersion.
//
// +kubebuilder:validation:XValidation:rule="has(self.revisionName) || has(self.customVersion)",message="spec.injectionStrategy.revision needs revisionName or customVersion"
type SidecarSetInjectRevision struct {
	// CustomVersion selects the revision by the value of its
	// apps.kruise.io/sidecarset-custom-version label.
	// +optional
	CustomVersion *string `json:"customVersion,omitempty"`

	// RevisionName is the name of the ControllerRevision to inject.
	// +optional
	RevisionName *string `json:"revisionName,omitempty"`

	// Policy is Always or Partial. Default Always.
	// +optional
	// +kubebuilder:default=Always
	Policy SidecarSetInjectRevisionPolicy `json:"policy,omitempty"`
}

// SidecarSetUpdateStrategyType is whether injected pods are updated.
// +kubebuilder:validation:Enum=NotUpdate;RollingUpdate
type SidecarSetUpdateStrategyType string

const (
	// NotUpdateSidecarSetStrategyType leaves injected pods alone; only new pods get the new
	// sidecars.
	NotUpdateSidecarSetStrategyType SidecarSetUpdateStrategyType = "NotUpdate"
	// RollingUpdateSidecarSetStrategyType updates the sidecars of injected pods in place,
	// in batches.
	RollingUpdateSidecarSetStrategyType SidecarSetUpdateStrategyType = "RollingUpdate"
)

// SidecarSetUpdateStrategy tunes updates of injected pods.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.type) && self.type == 'RollingUpdate' && has(self.selector) && has(self.partition) && (type(self.partition) == string || self.partition != 0))",message="spec.updateStrategy.partition and spec.updateStrategy.selector cannot be used together"
type SidecarSetUpdateStrategy struct {
	// Type is NotUpdate or RollingUpdate. Default RollingUpdate.
	// +optional
	// +kubebuilder:default=RollingUpdate
	Type SidecarSetUpdateStrategyType `json:"type,omitempty"`

	// Paused stops updating injected pods while true; injection into new pods goes on.
	// Default false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Selector limits the update to the matching pods. With an injection revision pinned it
	// also picks the new pods that get the latest revision instead.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Partition is the number of matched pods, or the percentage of them, to keep at old
	// revisions. Default 0: update all. Cannot be used with selector.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$')",message="spec.updateStrategy.partition must be a non-negative number or a percentage"
	Partition *intstr.IntOrString `json:"partition,omitempty"`

	// MaxUnavailable is the most matched pods whose sidecars may be unavailable at once
	// during the update: a number, or a percentage of matched pods rounded up. Default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$')",message="spec.updateStrategy.maxUnavailable must be a non-negative number or a percentage"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// PriorityStrategy orders the pods to update by weight or by label value.
	// +optional
	PriorityStrategy *appspub.UpdatePriorityStrategy `json:"priorityStrategy,omitempty"`

	// ScatterStrategy spreads pods with the given labels across update batches; it is applied
	// after the priority order.
	// +optional
	ScatterStrategy UpdateScatterStrategy `json:"scatterStrategy,omitempty"`
}

// SidecarSetStatus is the observed state of a SidecarSet.
type SidecarSetStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// MatchedPods is the number of pods the selector matches that were created after the
	// SidecarSet.
	// +required
	MatchedPods int32 `json:"matchedPods"`

	// UpdatedPods is the number of matched pods running the latest sidecars.
	// +required
	UpdatedPods int32 `json:"updatedPods"`

	// ReadyPods is the number of matched pods that are ready.
	// +required
	ReadyPods int32 `json:"readyPods"`

	// UpdatedReadyPods is the number of matched pods running the latest sidecars and ready.
	// +optional
	UpdatedReadyPods int32 `json:"updatedReadyPods,omitempty"`

	// LatestRevision is the name of the ControllerRevision of the current spec.
	// +optional
	LatestRevision string `json:"latestRevision,omitempty"`

	// CollisionCount counts hash collisions of revision names; the controller mixes it into
	// the next revision name to avoid them.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`
}

// SidecarSet injects sidecar containers, volumes and metadata into the pods it selects at
// creation, and updates those sidecars in place afterwards, independently of the pods'
// workloads.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="MATCHED",type="integer",JSONPath=".status.matchedPods",description="Pods matched."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedPods",description="Matched pods running the latest sidecars."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyPods",description="Matched pods that are ready."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
type SidecarSet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec SidecarSetSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status SidecarSetStatus `json:"status,omitempty"`
}

// SidecarSetList is a list of SidecarSets.
//
// +kubebuilder:object:root=true
type SidecarSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the SidecarSets.
	Items []SidecarSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SidecarSet{}, &SidecarSetList{})
}

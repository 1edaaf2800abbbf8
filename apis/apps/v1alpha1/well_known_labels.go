package v1alpha1

// Labels and annotations that workloads of this group write on, or read from, the objects
// they manage. Their keys and values are part of the API: users and other tools rely on them.
const (
	// ControllerRevisionHashLabelKey is the label on a pod (or subset workload) whose value names
	// the ControllerRevision it was created from.
	ControllerRevisionHashLabelKey = "apps.kruise.io/controller-revision-hash"

	// CloneSetInstanceID is the label a CloneSet puts on each pod and on the PVCs created for
	// it. A pod and its PVCs share the value, which is also the suffix of their names, so a
	// recreated pod can pick up the PVCs of the pod it replaces.
	CloneSetInstanceID = "apps.kruise.io/cloneset-instance-id"

	// CloneSetScalingExcludePreparingDeleteKey is a CloneSet label; with the value "true" the
	// CloneSet does not count pods held in the PreparingDelete lifecycle state when it scales.
	CloneSetScalingExcludePreparingDeleteKey = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"

	// SpecifiedDeleteKey is a pod label a user sets to ask the owning workload to delete this
	// pod (and, for a scale-in, to pick it first). Any value is accepted.
	SpecifiedDeleteKey = "apps.kruise.io/specified-delete"

	// SubSetNameLabelKey is the label a UnitedDeployment puts on each subset workload and its
	// pods; the value is the subset name from spec.topology.subsets.
	SubSetNameLabelKey = "apps.kruise.io/subset-name"

	// AnnotationSubsetPatchKey is the annotation on the pods of a UnitedDeployment subset that
	// records the subset patch applied to them, in JSON.
	AnnotationSubsetPatchKey = "apps.kruise.io/subset-patch"

	// ImagePreDownloadCreatedKey is the annotation a workload sets once it has created the
	// image pre-download jobs for its update revision.
	ImagePreDownloadCreatedKey = "apps.kruise.io/pre-predownload-created"

	// ImagePreDownloadIgnoredKey is the annotation a workload sets when it decided not to
	// pre-download the images of its update revision.
	ImagePreDownloadIgnoredKey = "apps.kruise.io/image-predownload-ignored"

	// AnnotationUsingEnhancedLiveness on a pod, with the value "true", hands its containers'
	// liveness probes to the node agent instead of the kubelet.
	AnnotationUsingEnhancedLiveness = "apps.kruise.io/using-enhanced-liveness"

	// AnnotationNativeContainerProbeContext keeps, in JSON, the original liveness probes of a
	// pod whose probes were moved to the node agent.
	AnnotationNativeContainerProbeContext = "apps.kruise.io/container-probe-context"
)

// Deletion protection: a label on namespaces, CRDs and workloads that makes the webhook refuse
// their deletion.
const (
	// DeletionProtectionKey is the label key; its value is DeletionProtectionTypeAlways or
	// DeletionProtectionTypeCascading.
	DeletionProtectionKey = "policy.kruise.io/delete-protection"

	// DeletionProtectionTypeAlways refuses every deletion until the label is removed.
	DeletionProtectionTypeAlways = "Always"

	// DeletionProtectionTypeCascading refuses deletion while the object still owns active
	// resources: pods of a workload, objects in a namespace, custom resources of a CRD.
	DeletionProtectionTypeCascading = "Cascading"
)

// PodDeletionCostAnnotation is the Kubernetes pod annotation whose integer value ranks pods for
// scale-in: pods with a lower cost are deleted first. Workloads of this group honour it too.
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// Environment variables set on a sidecar container of a Job pod to have the node agent stop the
// sidecar once the main containers have exited.
const (
	// KruiseTerminateSidecarEnv, set to "true", asks for the sidecar to be stopped when the
	// main containers of the pod have finished.
	KruiseTerminateSidecarEnv = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT"

	// KruiseTerminateSidecarWithImageEnv names an image that replaces the sidecar's image, by
	// an in-place update, to stop it; needed where the container cannot simply be killed.
	KruiseTerminateSidecarWithImageEnv = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE"

	// KruiseIgnoreContainerExitCodeEnv, set to "true", makes the pod's phase ignore the exit
	// code of the stopped sidecar.
	KruiseIgnoreContainerExitCodeEnv = "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE"

	// SidecarTerminatedCondition is the pod condition type the SidecarTerminator sets when it
	// ends a pod's phase itself (a sidecar with KruiseIgnoreContainerExitCodeEnv). A
	// ContainerRecreateRequest may still stop containers of such a pod though its phase is final.
	SidecarTerminatedCondition = "SidecarTerminated"

	// VirtualKubeletNodeLabel is the Node label whose value VirtualKubeletNodeType marks a
	// serverless node.
	VirtualKubeletNodeLabel = "type"
)

package containerrecreaterequest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
)

// minActiveDeadlineSeconds is the smallest activeDeadlineSeconds 1.8 accepts.
const minActiveDeadlineSeconds = 3

// validateCreate checks what a user may set on a new request, before defaults and the pod.
func validateCreate(crr *appsv1alpha1.ContainerRecreateRequest) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if crr.Spec.PodName == "" {
		errs = append(errs, field.Required(spec.Child("podName"), "name the pod whose containers to recreate"))
	}
	if len(crr.Spec.Containers) == 0 {
		errs = append(errs, field.Required(spec.Child("containers"), "list at least one container to recreate"))
	}
	if d := crr.Spec.ActiveDeadlineSeconds; d != nil && *d < minActiveDeadlineSeconds {
		errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), *d, fmt.Sprintf("must be at least %d", minActiveDeadlineSeconds)))
	}
	if s := crr.Spec.Strategy; s != nil {
		sp := spec.Child("strategy")
		errs = append(errs, fieldrule.NonNegative(sp.Child("terminationGracePeriodSeconds"), s.TerminationGracePeriodSeconds, "")...)
		errs = append(errs, fieldrule.NonNegative(sp.Child("unreadyGracePeriodSeconds"), s.UnreadyGracePeriodSeconds, "")...)
		errs = append(errs, fieldrule.NonNegative(sp.Child("minStartedSeconds"), &s.MinStartedSeconds, "")...)
		switch s.FailurePolicy {
		case "", appsv1alpha1.ContainerRecreateRequestFailurePolicyFail, appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore:
		default:
			errs = append(errs, field.NotSupported(sp.Child("failurePolicy"), s.FailurePolicy, []string{
				string(appsv1alpha1.ContainerRecreateRequestFailurePolicyFail), string(appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore)}))
		}
	}
	seen := sets.New[string]()
	for i, c := range crr.Spec.Containers {
		p := spec.Child("containers").Index(i)
		if seen.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		seen.Insert(c.Name)
		if c.PreStop != nil {
			errs = append(errs, field.Forbidden(p.Child("preStop"), "is read-only: copied from the pod"))
		}
		if c.Ports != nil {
			errs = append(errs, field.Forbidden(p.Child("ports"), "is read-only: copied from the pod"))
		}
		if c.StatusContext != nil {
			errs = append(errs, field.Forbidden(p.Child("statusContext"), "is read-only: recorded from the pod's status"))
		}
	}
	return errs
}

// setDefaults fills the strategy and the labels that do not need the pod.
func setDefaults(crr *appsv1alpha1.ContainerRecreateRequest) {
	if crr.Spec.Strategy == nil {
		crr.Spec.Strategy = &appsv1alpha1.ContainerRecreateRequestStrategy{}
	}
	if crr.Spec.Strategy.FailurePolicy == "" {
		crr.Spec.Strategy.FailurePolicy = appsv1alpha1.ContainerRecreateRequestFailurePolicyFail
	}
	if crr.Labels == nil {
		crr.Labels = map[string]string{}
	}
	crr.Labels[appsv1alpha1.ContainerRecreateRequestPodNameKey] = crr.Spec.PodName
	crr.Labels[appsv1alpha1.ContainerRecreateRequestActiveKey] = "true"
}

// fillFromPod records the pod's node and UID in the labels and, per container, its preStop
// hook, its ports (for an HTTP hook), and its current container ID and restart count, by which
// the daemon and the controller tell the recreated container from the old one.
func fillFromPod(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) field.ErrorList {
	spec := field.NewPath("spec")
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return field.ErrorList{field.Invalid(spec.Child("podName"), crr.Spec.PodName, "the pod is not active; containers can be recreated only in a running pod")}
	}
	if pod.Spec.NodeName == "" {
		return field.ErrorList{field.Invalid(spec.Child("podName"), crr.Spec.PodName, "the pod is pending; containers can be recreated only once it runs on a node")}
	}
	crr.Labels[appsv1alpha1.ContainerRecreateRequestNodeNameKey] = pod.Spec.NodeName
	crr.Labels[appsv1alpha1.ContainerRecreateRequestPodUIDKey] = string(pod.UID)
	if crr.Spec.Strategy.TerminationGracePeriodSeconds == nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		g := *pod.Spec.TerminationGracePeriodSeconds
		crr.Spec.Strategy.TerminationGracePeriodSeconds = &g
	}

	var errs field.ErrorList
	for i := range crr.Spec.Containers {
		c := &crr.Spec.Containers[i]
		p := spec.Child("containers").Index(i).Child("name")
		podContainer := findContainer(pod, c.Name)
		if podContainer == nil {
			errs = append(errs, field.NotFound(p, c.Name))
			continue
		}
		st := findStatus(pod, c.Name)
		if st == nil || st.ContainerID == "" {
			errs = append(errs, field.Invalid(p, c.Name, "the container has no containerID in the pod's status yet; retry once it has started"))
			continue
		}
		if lc := podContainer.Lifecycle; lc != nil && lc.PreStop != nil {
			c.PreStop = &appsv1alpha1.ProbeHandler{Exec: lc.PreStop.Exec, HTTPGet: lc.PreStop.HTTPGet, TCPSocket: lc.PreStop.TCPSocket}
			if c.PreStop.HTTPGet != nil {
				c.Ports = podContainer.Ports
			}
		}
		c.StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: st.ContainerID, RestartCount: st.RestartCount}
	}
	return errs
}

// validateUpdate keeps the spec but spec.containers (the daemon may complete them), the
// system labels and, once set, the unready-acquired annotation as they are.
func validateUpdate(crr, old *appsv1alpha1.ContainerRecreateRequest) field.ErrorList {
	var errs field.ErrorList
	a, b := crr.Spec.DeepCopy(), old.Spec.DeepCopy()
	a.Containers, b.Containers = nil, nil
	if !apiequality.Semantic.DeepEqual(a, b) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "is immutable, except spec.containers"))
	}
	labels := field.NewPath("metadata", "labels")
	for _, k := range []string{
		appsv1alpha1.ContainerRecreateRequestPodNameKey,
		appsv1alpha1.ContainerRecreateRequestPodUIDKey,
		appsv1alpha1.ContainerRecreateRequestNodeNameKey,
	} {
		if crr.Labels[k] != old.Labels[k] {
			errs = append(errs, field.Forbidden(labels.Key(k), "is immutable"))
		}
	}
	k := appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey
	if was := old.Annotations[k]; was != "" && crr.Annotations[k] != was {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(k), "is immutable once set"))
	}
	return errs
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	return named(pod.Spec.Containers, name, func(c *corev1.Container) string { return c.Name })
}

func findStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	return named(pod.Status.ContainerStatuses, name, func(s *corev1.ContainerStatus) string { return s.Name })
}

// named is the first item of items whose nameOf is name, or nil.
func named[T any](items []T, name string, nameOf func(*T) string) *T {
	for i := range items {
		if nameOf(&items[i]) == name {
			return &items[i]
		}
	}
	return nil
}

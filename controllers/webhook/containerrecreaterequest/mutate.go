package containerrecreaterequest

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the ContainerRecreateRequest handler at its 1.8 path,
// /mutate-apps-kruise-io-v1alpha1-containerrecreaterequest. It reads the target pod through
// the manager's API reader: a request is usually created right after the pod changed, and a
// stale cache would record an old container ID.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "containerrecreaterequest",
	Mutating: func(e admit.Env) admission.Handler {
		return NewMutatingHandler(e.Kind.Decoder, e.Manager.GetAPIReader(), e.Gates)
	},
}.Handlers

// NewMutatingHandler returns the handler; reader gets the target pod. It refuses every request
// while kruise-daemon is gated off, refuses an update of an immutable field (403), and answers
// a create with a patch that completes the request from its pod.
func NewMutatingHandler(dec admission.Decoder, reader client.Reader, gates featuregate.FeatureGate) admission.Handler {
	kind := admit.Kind{
		Name: "containerrecreaterequest", Decoder: dec, Namespaced: true, WithOld: true,
		Gate: func() error {
			if !gates.Enabled(features.KruiseDaemon) {
				return admit.Refuse(http.StatusForbidden, admit.GateOff(features.KruiseDaemon))
			}
			return nil
		},
	}
	return admit.Mutating(kind, func(ctx context.Context, crr, old *appsv1alpha1.ContainerRecreateRequest) error {
		if old == nil {
			return complete(ctx, reader, crr)
		}
		if errs := validateUpdate(crr, old); len(errs) > 0 {
			return admit.Refuse(http.StatusForbidden, errs.ToAggregate())
		}
		return nil
	})
}

// complete checks a new request against the 1.8 rules, defaults it and fills it in from its
// pod, which it reads in the request's namespace only.
func complete(ctx context.Context, reader client.Reader, crr *appsv1alpha1.ContainerRecreateRequest) error {
	if errs := validateCreate(crr); len(errs) > 0 {
		return admit.Refuse(http.StatusBadRequest, errs.ToAggregate())
	}
	setDefaults(crr)
	pod, err := admit.Pod(ctx, reader, crr.Namespace, crr.Spec.PodName)
	switch {
	case err != nil:
		return err
	case pod == nil:
		return admit.Refuse(http.StatusBadRequest, fmt.Errorf("spec.podName: pod %s not found in namespace %s", crr.Spec.PodName, crr.Namespace))
	}
	if errs := fillFromPod(crr, pod); len(errs) > 0 {
		return admit.Refuse(http.StatusBadRequest, errs.ToAggregate())
	}
	return nil
}

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
	// The SidecarTerminator ends a pod's phase before it stops the sidecars whose exit code the
	// phase ignores, so a pod with its condition is let through as 1.8 does.
	active := pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
	if !active && !terminatedBySidecarTerminator(pod) {
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

// terminatedBySidecarTerminator tells a pod whose phase the SidecarTerminator ended.
func terminatedBySidecarTerminator(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == appsv1alpha1.SidecarTerminatedCondition
	})
}

package podprobemarker

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the PodProbeMarker validating handler at its 1.8 path,
// /validate-apps-kruise-io-podprobemarker.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Name: "podprobemarker",
	Validating: func(e admit.Env) admission.Handler { return NewHandler(e.Gates) },
}.Handlers

// NewHandler returns the handler. It refuses markers while PodProbeMarkerGate or KruiseDaemon is
// off (403), and invalid ones with every field error. An update of a marker being deleted
// always passes, so its finalizer can be removed whatever the gates.
func NewHandler(gates featuregate.FeatureGate) admission.Handler {
	kind := admit.Kind{Name: "podprobemarker", Decoder: admission.NewDecoder(apis.NewScheme()), WithOld: true, PassDeleting: true}
	return admit.Validating(kind, func(_ context.Context, ppm, old *appsv1alpha1.PodProbeMarker) (field.ErrorList, error) {
		if err := admit.RequireGates(gates, features.PodProbeMarkerGate, features.KruiseDaemon); err != nil {
			return nil, err
		}
		return validatePodProbeMarker(ppm, old), nil
	})
}

// reservedProbeNames are condition types Kubernetes and the add-on write themselves; 1.8
// refuses them as probe names.
var reservedProbeNames = []string{
	string(corev1.PodScheduled), string(corev1.PodInitialized), string(corev1.PodReady),
	string(corev1.ContainersReady), string(pub.KruisePodReadyConditionType), string(pub.InPlaceUpdateReady),
}

// validatePodProbeMarker returns every rule ppm breaks; old is the stored marker on update.
func validatePodProbeMarker(ppm, old *appsv1alpha1.PodProbeMarker) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateSelector(ppm.Spec.Selector, spec.Child("selector"))
	if old != nil && !apiequality.Semantic.DeepEqual(old.Spec.Selector, ppm.Spec.Selector) {
		errs = append(errs, field.Forbidden(spec.Child("selector"), "selector is immutable; create a new PodProbeMarker to probe other pods"))
	}
	probesPath := spec.Child("probes")
	if len(ppm.Spec.Probes) == 0 {
		return append(errs, field.Required(probesPath, "at least one probe is required"))
	}
	names := sets.New[string]()
	conditions := sets.New[string]()
	for i := range ppm.Spec.Probes {
		p := &ppm.Spec.Probes[i]
		path := probesPath.Index(i)
		errs = append(errs, validateProbeName(p.Name, names, path.Child("name"))...)
		names.Insert(p.Name)
		if p.ContainerName == "" {
			errs = append(errs, field.Required(path.Child("containerName"), "the name of the container the probe runs in"))
		}
		errs = append(errs, validateProbe(&p.Probe, path.Child("probe"))...)
		if p.PodConditionType == "" && len(p.MarkerPolicy) == 0 {
			errs = append(errs, field.Required(path, "podConditionType or markerPolicy is required: the probe must mark the pod somehow"))
		}
		if t := p.PodConditionType; t != "" {
			tPath := path.Child("podConditionType")
			if conditions.Has(t) {
				errs = append(errs, field.Duplicate(tPath, t))
			}
			conditions.Insert(t)
			for _, msg := range validation.IsQualifiedName(t) {
				errs = append(errs, field.Invalid(tPath, t, msg))
			}
		}
		states := sets.New[appsv1alpha1.ProbeState]()
		for j := range p.MarkerPolicy {
			pol := &p.MarkerPolicy[j]
			pPath := path.Child("markerPolicy").Index(j)
			if states.Has(pol.State) {
				errs = append(errs, field.Duplicate(pPath.Child("state"), pol.State))
			}
			states.Insert(pol.State)
			errs = append(errs, validatePolicy(pol, pPath)...)
		}
	}
	return errs
}

func validateSelector(sel *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Required(path, "a selector with matchLabels or matchExpressions is required; an empty one would probe every pod")}
	}
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

func validateProbeName(name string, seen sets.Set[string], path *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, "a probe name is required")}
	case strings.Contains(name, "#"):
		return field.ErrorList{field.Invalid(path, name, "must not contain '#', which separates the marker and probe names on the node")}
	case sets.New(reservedProbeNames...).Has(name):
		return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("must not be one of the reserved condition types %s", strings.Join(reservedProbeNames, ", ")))}
	case seen.Has(name):
		return field.ErrorList{field.Duplicate(path, name)}
	}
	return nil
}

// validateProbe checks the handler and the timing. Like 1.8, the handler is exactly one of
// exec and tcpSocket: httpGet is refused.
func validateProbe(p *appsv1alpha1.ContainerProbeSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	handlers := 0
	if p.Exec != nil {
		handlers++
		if len(p.Exec.Command) == 0 {
			errs = append(errs, field.Required(path.Child("exec", "command"), "the command to run in the container"))
		}
	}
	if p.TCPSocket != nil {
		handlers++
		errs = append(errs, validatePort(p.TCPSocket.Port, path.Child("tcpSocket", "port"))...)
	}
	if p.HTTPGet != nil {
		errs = append(errs, field.Forbidden(path.Child("httpGet"), "httpGet probes are not supported; use exec or tcpSocket"))
	}
	if p.GRPC != nil {
		errs = append(errs, field.Forbidden(path.Child("grpc"), "grpc probes are not supported; use exec or tcpSocket"))
	}
	switch {
	case handlers == 0 && p.HTTPGet == nil && p.GRPC == nil:
		errs = append(errs, field.Required(path, "exactly one of exec or tcpSocket is required"))
	case handlers > 1:
		errs = append(errs, field.Forbidden(path, "exactly one of exec or tcpSocket may be set"))
	}
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold},
	} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.v, "must be 0 or more"))
		}
	}
	return errs
}

func validatePort(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	var v any
	if port.Type == intstr.Int {
		msgs, v = validation.IsValidPortNum(port.IntValue()), port.IntValue()
	} else {
		msgs, v = validation.IsValidPortName(port.StrVal), port.StrVal
	}
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, v, m))
	}
	return errs
}

func validatePolicy(pol *appsv1alpha1.ProbeMarkerPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pol.State != appsv1alpha1.ProbeSucceeded && pol.State != appsv1alpha1.ProbeFailed {
		errs = append(errs, field.NotSupported(path.Child("state"), pol.State, []string{string(appsv1alpha1.ProbeSucceeded), string(appsv1alpha1.ProbeFailed)}))
	}
	if len(pol.Labels) == 0 && len(pol.Annotations) == 0 {
		errs = append(errs, field.Required(path, "labels or annotations to put on the pod are required"))
	}
	errs = append(errs, metav1validation.ValidateLabels(pol.Labels, path.Child("labels"))...)
	for k := range pol.Annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations"), k, msg))
		}
	}
	return errs
}

package ephemeraljob

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
)

// allowedFields are the JSON names of the container fields an ephemeral container may set, as
// the apiserver allows them; any other field, including one a later API adds, is refused.
var allowedFields = sets.New(
	"name", "image", "command", "args", "workingDir", "envFrom", "env", "volumeMounts",
	"volumeDevices", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
	"securityContext", "stdin", "stdinOnce", "tty",
)

// validateEphemeralJob returns every rule job breaks, each naming its field.
func validateEphemeralJob(job *appsv1alpha1.EphemeralJob) field.ErrorList {
	spec, p := &job.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if spec.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), "a label selector of the target pods, e.g. matchLabels: {app: web}"))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	errs = append(errs, fieldrule.NonNegative(p.Child("replicas"), spec.Replicas, "pods")...)
	errs = append(errs, fieldrule.NonNegative(p.Child("parallelism"), spec.Parallelism, "pods")...)
	errs = append(errs, fieldrule.Positive(p.Child("activeDeadlineSeconds"), spec.ActiveDeadlineSeconds, "seconds")...)
	errs = append(errs, fieldrule.NonNegative(p.Child("ttlSecondsAfterFinished"), spec.TTLSecondsAfterFinished, "seconds")...)
	return append(errs, validateContainers(spec.Template.EphemeralContainers, p.Child("template", "ephemeralContainers"))...)
}

func validateContainers(ecs []corev1.EphemeralContainer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range ecs {
		c, cp := &ecs[i].EphemeralContainerCommon, p.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(cp.Child("name"), "a DNS-1123 label, e.g. 'debug'"))
		} else {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
			}
			if names.Has(c.Name) {
				errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
			}
			names.Insert(c.Name)
		}
		switch {
		case c.Image == "":
			errs = append(errs, field.Required(cp.Child("image"), "the image the container runs"))
		case c.Image != strings.TrimSpace(c.Image):
			errs = append(errs, field.Invalid(cp.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		switch c.ImagePullPolicy {
		case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		default:
			errs = append(errs, field.NotSupported(cp.Child("imagePullPolicy"), c.ImagePullPolicy, []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}))
		}
		switch c.TerminationMessagePolicy {
		case "", corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
		default:
			errs = append(errs, field.NotSupported(cp.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, []string{string(corev1.TerminationMessageReadFile), string(corev1.TerminationMessageFallbackToLogsOnError)}))
		}
		for j, e := range c.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(cp.Child("env").Index(j).Child("name"), e.Name, msg))
			}
		}
		for j, m := range c.VolumeMounts {
			mp := cp.Child("volumeMounts").Index(j)
			if m.SubPath != "" {
				errs = append(errs, field.Forbidden(mp.Child("subPath"), "cannot be set for an ephemeral container"))
			}
			if m.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(mp.Child("subPathExpr"), "cannot be set for an ephemeral container"))
			}
		}
		errs = append(errs, forbiddenFields(c, cp)...)
	}
	return errs
}

// forbiddenFields names every field of c that is set but not in allowedFields.
func forbiddenFields(c *corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	v, t := reflect.ValueOf(*c), reflect.TypeOf(*c)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if allowedFields.Has(name) || v.Field(i).IsZero() {
			continue
		}
		errs = append(errs, field.Forbidden(p.Child(name), "cannot be set for an ephemeral container; it may set only "+strings.Join(sets.List(allowedFields), ", ")))
	}
	return errs
}

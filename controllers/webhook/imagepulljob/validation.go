package imagepulljob

import (
	"github.com/google/go-containerregistry/pkg/name"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// maxImages is the most images one ImageListPullJob may list.
const maxImages = 255

// validateImagePullJob returns every rule the job breaks.
func validateImagePullJob(job *appsv1alpha1.ImagePullJob) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateImage(job.Spec.Image, spec.Child("image"))
	return append(errs, validateTemplate(&job.Spec.ImagePullJobTemplate, spec)...)
}

// validateImageListPullJob returns every rule the job breaks.
func validateImageListPullJob(job *appsv1alpha1.ImageListPullJob) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	images := spec.Child("images")
	switch n := len(job.Spec.Images); {
	case n == 0:
		errs = append(errs, field.Required(images, "list at least one image"))
	case n > maxImages:
		errs = append(errs, field.TooMany(images, n, maxImages))
	}
	seen := map[string]bool{}
	for i, image := range job.Spec.Images {
		if seen[image] {
			errs = append(errs, field.Duplicate(images.Index(i), image))
		}
		seen[image] = true
		errs = append(errs, validateImage(image, images.Index(i))...)
	}
	return append(errs, validateTemplate(&job.Spec.ImagePullJobTemplate, spec)...)
}

func validateImage(image string, path *field.Path) field.ErrorList {
	if image == "" {
		return field.ErrorList{field.Required(path, "an image reference such as registry.example.com/app:v1")}
	}
	if _, err := name.ParseReference(image, name.WeakValidation); err != nil {
		return field.ErrorList{field.Invalid(path, image, "not an image reference: "+err.Error())}
	}
	return nil
}

// validateTemplate checks what ImagePullJob and ImageListPullJob share.
func validateTemplate(t *appsv1alpha1.ImagePullJobTemplate, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s := t.Selector; s != nil {
		path := spec.Child("selector")
		hasLabels := s.MatchLabels != nil || s.MatchExpressions != nil
		if s.Names != nil && hasLabels {
			errs = append(errs, field.Invalid(path, "names and labels", "set either names or matchLabels/matchExpressions, not both"))
		}
		if hasLabels {
			if _, err := metav1.LabelSelectorAsSelector(&s.LabelSelector); err != nil {
				errs = append(errs, field.Invalid(path, s.LabelSelector, err.Error()))
			}
		}
		seen := map[string]bool{}
		for i, n := range s.Names {
			if seen[n] {
				errs = append(errs, field.Duplicate(path.Child("names").Index(i), n))
			}
			seen[n] = true
		}
	}
	if ps := t.PodSelector; ps != nil {
		path := spec.Child("podSelector")
		if t.Selector != nil {
			errs = append(errs, field.Invalid(path, "podSelector", "set either selector or podSelector, not both"))
		}
		if _, err := metav1.LabelSelectorAsSelector(&ps.LabelSelector); err != nil {
			errs = append(errs, field.Invalid(path, ps.LabelSelector, err.Error()))
		}
	}
	if p := t.Parallelism; p != nil {
		path := spec.Child("parallelism")
		if v, err := intstr.GetScaledValueFromIntOrPercent(p, 100, true); err != nil || v < 1 {
			errs = append(errs, field.Invalid(path, p.String(), "must be a positive number or a percentage such as 50%"))
		}
	}
	cp := spec.Child("completionPolicy")
	switch t.CompletionPolicy.Type {
	case appsv1alpha1.Always, "":
		timeout := int64(appsv1alpha1.DefaultPullTimeoutSeconds)
		if t.PullPolicy != nil && t.PullPolicy.TimeoutSeconds != nil {
			timeout = int64(*t.PullPolicy.TimeoutSeconds)
		}
		if ads := t.CompletionPolicy.ActiveDeadlineSeconds; ads != nil && *ads < timeout {
			errs = append(errs, field.Invalid(cp.Child("activeDeadlineSeconds"), *ads, "must not be less than spec.pullPolicy.timeoutSeconds (600 by default)"))
		}
	case appsv1alpha1.Never:
		if t.CompletionPolicy.ActiveDeadlineSeconds != nil {
			errs = append(errs, field.Forbidden(cp.Child("activeDeadlineSeconds"), "only works with completionPolicy type Always"))
		}
		if t.CompletionPolicy.TTLSecondsAfterFinished != nil {
			errs = append(errs, field.Forbidden(cp.Child("ttlSecondsAfterFinished"), "only works with completionPolicy type Always"))
		}
	default:
		errs = append(errs, field.NotSupported(cp.Child("type"), t.CompletionPolicy.Type, []string{string(appsv1alpha1.Always), string(appsv1alpha1.Never)}))
	}
	return errs
}

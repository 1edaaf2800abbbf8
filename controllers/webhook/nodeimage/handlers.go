package nodeimage

import (
	"context"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// maxImages is the most images one NodeImage may hold, as in 1.8.
const maxImages = 256

// Handlers serves the NodeImage defaulting and validating handlers at their 1.8 paths.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "nodeimage",
	Mutating: func(e admit.Env) admission.Handler {
		return admit.Mutating(e.Kind, admit.Defaults(func(ni *appsv1alpha1.NodeImage) { setDefaults(ni, e.Deps.Clock) }))
	},
	Validating: func(e admit.Env) admission.Handler {
		e.Kind.Gate = func() error { return admit.RequireGates(e.Deps.Gates, features.KruiseDaemon) }
		return admit.Validating(e.Kind, func(_ context.Context, ni, _ *appsv1alpha1.NodeImage) (field.ErrorList, error) {
			return validate(ni), nil
		})
	},
}.Handlers

// setDefaults stamps the tags without createdAt with now, fills their pull policies and sorts
// every image's tags by name, in the spec and in the status.
func setDefaults(ni *appsv1alpha1.NodeImage, c clock.PassiveClock) {
	now := metav1.NewTime(c.Now())
	for name, image := range ni.Spec.Images {
		for i := range image.Tags {
			tag := &image.Tags[i]
			if tag.CreatedAt == nil {
				tag.CreatedAt = now.DeepCopy()
			}
			if tag.PullPolicy == nil {
				tag.PullPolicy = &appsv1alpha1.ImageTagPullPolicy{}
			}
			if tag.PullPolicy.TimeoutSeconds == nil {
				tag.PullPolicy.TimeoutSeconds = ptr.To(appsv1alpha1.DefaultPullTimeoutSeconds)
			}
			if tag.PullPolicy.BackoffLimit == nil {
				tag.PullPolicy.BackoffLimit = ptr.To(appsv1alpha1.DefaultPullBackoffLimit)
			}
		}
		sort.SliceStable(image.Tags, func(i, j int) bool { return image.Tags[i].Tag < image.Tags[j].Tag })
		ni.Spec.Images[name] = image
	}
	for name, image := range ni.Status.ImageStatuses {
		sort.SliceStable(image.Tags, func(i, j int) bool { return image.Tags[i].Tag < image.Tags[j].Tag })
		ni.Status.ImageStatuses[name] = image
	}
}

// validate returns every rule ni breaks, images in name order.
func validate(ni *appsv1alpha1.NodeImage) field.ErrorList {
	images := field.NewPath("spec", "images")
	var errs field.ErrorList
	if n := len(ni.Spec.Images); n > maxImages {
		errs = append(errs, field.TooMany(images, n, maxImages))
	}
	names := make([]string, 0, len(ni.Spec.Images))
	for name := range ni.Spec.Images {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := images.Key(name)
		if name == "" {
			errs = append(errs, field.Required(path, "an image name such as registry.example.com/app"))
		}
		seen := map[string]bool{}
		for i, tag := range ni.Spec.Images[name].Tags {
			tp := path.Child("tags").Index(i)
			switch {
			case tag.Tag == "":
				errs = append(errs, field.Required(tp.Child("tag"), "a tag such as v1"))
			case seen[tag.Tag]:
				errs = append(errs, field.Duplicate(tp.Child("tag"), tag.Tag))
			}
			seen[tag.Tag] = true
			if tag.CreatedAt == nil {
				errs = append(errs, field.Required(tp.Child("createdAt"), "the time the tag was asked for"))
			}
			if tag.Version < 0 {
				errs = append(errs, field.Invalid(tp.Child("version"), tag.Version, "must not be less than 0"))
			}
			switch {
			case tag.PullPolicy == nil:
				errs = append(errs, field.Required(tp.Child("pullPolicy"), "a pull policy with ttlSecondsAfterFinished"))
			case tag.PullPolicy.TTLSecondsAfterFinished == nil:
				errs = append(errs, field.Required(tp.Child("pullPolicy", "ttlSecondsAfterFinished"), "how long the tag stays after its pull finished, in seconds"))
			}
		}
	}
	return errs
}

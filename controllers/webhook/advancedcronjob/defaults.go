package advancedcronjob

import (
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
)

// setDefaults fills what 1.8 defaults in an AdvancedCronJob: concurrency Allow, not paused, 3
// successful and 1 failed job kept, and, when withTemplates, the core pod defaults in the Job's
// or BroadcastJob's pod template.
func setDefaults(acj *appsv1alpha1.AdvancedCronJob, withTemplates bool) {
	spec := &acj.Spec
	if withTemplates {
		if t := spec.Template.JobTemplate; t != nil {
			coredefaults.PodSpec(&t.Spec.Template.Spec)
		}
		if t := spec.Template.BroadcastJobTemplate; t != nil {
			coredefaults.PodSpec(&t.Spec.Template.Spec)
		}
	}
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = appsv1alpha1.AllowConcurrent
	}
	if spec.Paused == nil {
		spec.Paused = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
}

// templates is what decides whether the templates are defaulted on an update.
func templates(acj *appsv1alpha1.AdvancedCronJob) any { return acj.Spec.Template }

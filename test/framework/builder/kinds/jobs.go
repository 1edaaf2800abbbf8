package kinds

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// AdvancedCronJobBuilder builds an AdvancedCronJob.
type AdvancedCronJobBuilder struct{ obj *appsv1alpha1.AdvancedCronJob }

// AdvancedCronJob starts an AdvancedCronJob that runs a batch/v1 Job, whose pod never
// restarts, every five minutes.
func AdvancedCronJob(name, namespace string) *AdvancedCronJobBuilder {
	_, tmpl := builder.AppTemplate(name)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &AdvancedCronJobBuilder{obj: &appsv1alpha1.AdvancedCronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: appsv1alpha1.AdvancedCronJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1alpha1.AdvancedCronJobSpec{
			Schedule: "*/5 * * * *",
			Template: appsv1alpha1.CronJobTemplate{JobTemplate: &batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: tmpl},
			}},
		},
	}}
}

// Schedule sets the cron schedule.
func (b *AdvancedCronJobBuilder) Schedule(s string) *AdvancedCronJobBuilder {
	b.obj.Spec.Schedule = s
	return b
}

// TimeZone sets the time zone the schedule is read in.
func (b *AdvancedCronJobBuilder) TimeZone(tz string) *AdvancedCronJobBuilder {
	b.obj.Spec.TimeZone = &tz
	return b
}

// SuccessfulJobsHistoryLimit sets how many successful runs are kept.
func (b *AdvancedCronJobBuilder) SuccessfulJobsHistoryLimit(n int32) *AdvancedCronJobBuilder {
	b.obj.Spec.SuccessfulJobsHistoryLimit = &n
	return b
}

// BroadcastJobTemplate runs a BroadcastJob of spec, labelled labels, instead of the jobTemplate.
func (b *AdvancedCronJobBuilder) BroadcastJobTemplate(labels map[string]string, spec appsv1alpha1.BroadcastJobSpec) *AdvancedCronJobBuilder {
	b.obj.Spec.Template = appsv1alpha1.CronJobTemplate{BroadcastJobTemplate: &appsv1alpha1.BroadcastJobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec,
	}}
	return b
}

// ImageListPullJobTemplate pulls images, with an ImageListPullJob labelled labels, instead of
// running the jobTemplate.
func (b *AdvancedCronJobBuilder) ImageListPullJobTemplate(labels map[string]string, images ...string) *AdvancedCronJobBuilder {
	b.obj.Spec.Template = appsv1alpha1.CronJobTemplate{ImageListPullJobTemplate: &appsv1alpha1.ImageListPullJobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: appsv1alpha1.ImageListPullJobSpec{Images: images},
	}}
	return b
}

// BroadcastJob replaces the jobTemplate with a broadcastJobTemplate of the same pod.
func (b *AdvancedCronJobBuilder) BroadcastJob() *AdvancedCronJobBuilder {
	t := &b.obj.Spec.Template
	if t.JobTemplate != nil {
		t.BroadcastJobTemplate = &appsv1alpha1.BroadcastJobTemplateSpec{
			Spec: appsv1alpha1.BroadcastJobSpec{Template: t.JobTemplate.Spec.Template},
		}
		t.JobTemplate = nil
	}
	return b
}

// Obj returns the built object.
func (b *AdvancedCronJobBuilder) Obj() *appsv1alpha1.AdvancedCronJob { return b.obj }

// EphemeralJobBuilder builds an EphemeralJob.
type EphemeralJobBuilder struct{ obj *appsv1alpha1.EphemeralJob }

// EphemeralJob starts an EphemeralJob that adds one ephemeral container, "debug", running
// builder.DefaultImage, to the pods labelled "app: <target>".
func EphemeralJob(name, namespace, target string) *EphemeralJobBuilder {
	return &EphemeralJobBuilder{obj: &appsv1alpha1.EphemeralJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "EphemeralJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1alpha1.EphemeralJobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": target}},
			Template: appsv1alpha1.EphemeralContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: builder.DefaultImage},
			}}},
		},
	}}
}

// Obj returns the built object.
func (b *EphemeralJobBuilder) Obj() *appsv1alpha1.EphemeralJob { return b.obj }

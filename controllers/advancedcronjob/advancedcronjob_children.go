package advancedcronjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// ScheduledAtAnnotation holds, on every job an AdvancedCronJob creates, the run it was created
// for (RFC 3339). The 1.8 name.
const ScheduledAtAnnotation = "apps.kruise.io/scheduled-at"

// childState is where a created job stands.
type childState int

const (
	childActive childState = iota
	childSucceeded
	childFailed
)

// child is one job created by an AdvancedCronJob, whatever its kind.
type child struct {
	obj         client.Object
	state       childState
	scheduledAt *time.Time
	// started orders finished children for the history limits: the job's start time, else
	// its creation.
	started time.Time
}

// templateKind is the kind spec.template asks for.
func templateKind(acj *appsv1alpha1.AdvancedCronJob) appsv1alpha1.TemplateKind {
	switch t := acj.Spec.Template; {
	case t.JobTemplate != nil:
		return appsv1alpha1.JobTemplate
	case t.ImageListPullJobTemplate != nil:
		return appsv1alpha1.ImageListPullJobTemplate
	case t.BroadcastJobTemplate != nil:
		return appsv1alpha1.BroadcastJobTemplate
	}
	return ""
}

// listChildren lists the jobs of the template's kind that acj controls.
func listChildren(ctx context.Context, c client.Reader, acj *appsv1alpha1.AdvancedCronJob) ([]child, error) {
	switch templateKind(acj) {
	case appsv1alpha1.JobTemplate:
		return ownedChildren(ctx, c, acj, &batchv1.JobList{}, "jobs", func(j *batchv1.Job) (childState, *metav1.Time) {
			return jobState(j), j.Status.StartTime
		})
	case appsv1alpha1.BroadcastJobTemplate:
		return ownedChildren(ctx, c, acj, &appsv1alpha1.BroadcastJobList{}, "broadcastjobs", func(j *appsv1alpha1.BroadcastJob) (childState, *metav1.Time) {
			return broadcastJobState(j), j.Status.StartTime
		})
	case appsv1alpha1.ImageListPullJobTemplate:
		return ownedChildren(ctx, c, acj, &appsv1alpha1.ImageListPullJobList{}, "imagelistpulljobs", func(j *appsv1alpha1.ImageListPullJob) (childState, *metav1.Time) {
			return imageListPullJobState(j), j.Status.StartTime
		})
	}
	return nil, nil
}

// ownedChildren lists the objects of list's kind (named plural in errors) in acj's namespace
// that acj controls, each a child whose state and start time read says.
func ownedChildren[T client.Object](ctx context.Context, c client.Reader, acj *appsv1alpha1.AdvancedCronJob, list client.ObjectList, plural string, read func(T) (childState, *metav1.Time)) ([]child, error) {
	if err := c.List(ctx, list, client.InNamespace(acj.Namespace)); err != nil {
		return nil, fmt.Errorf("list %s: %w", plural, err)
	}
	var out []child
	err := apimeta.EachListItem(list, func(o runtime.Object) error {
		j := o.(T)
		if ref := metav1.GetControllerOf(j); ref != nil && ref.UID == acj.UID {
			state, start := read(j)
			out = append(out, newChild(j, state, start))
		}
		return nil
	})
	return out, err
}

func newChild(o client.Object, s childState, start *metav1.Time) child {
	c := child{obj: o, state: s, started: o.GetCreationTimestamp().Time}
	if start != nil {
		c.started = start.Time
	}
	if raw := o.GetAnnotations()[ScheduledAtAnnotation]; raw != "" {
		if t, err := time.Parse(time.RFC3339, raw); err == nil {
			c.scheduledAt = &t
		}
	}
	return c
}

func jobState(j *batchv1.Job) childState {
	return finishedState(j.Status.Conditions, func(c batchv1.JobCondition) (string, corev1.ConditionStatus) { return string(c.Type), c.Status })
}

func broadcastJobState(j *appsv1alpha1.BroadcastJob) childState {
	return finishedState(j.Status.Conditions, func(c appsv1alpha1.JobCondition) (string, corev1.ConditionStatus) { return string(c.Type), c.Status })
}

// finishedState reads a job's conditions, named alike by Jobs and BroadcastJobs: the first True
// Complete or Failed one decides; none leaves the job active.
func finishedState[C any](conds []C, typeAndStatus func(C) (string, corev1.ConditionStatus)) childState {
	for _, c := range conds {
		typ, status := typeAndStatus(c)
		if status != corev1.ConditionTrue {
			continue
		}
		switch typ {
		case string(batchv1.JobComplete):
			return childSucceeded
		case string(batchv1.JobFailed):
			return childFailed
		}
	}
	return childActive
}

// imageListPullJobState: finished once it has a completion time; succeeded when every
// image's job succeeded, as 1.8 reads it.
func imageListPullJobState(j *appsv1alpha1.ImageListPullJob) childState {
	switch {
	case j.Status.CompletionTime == nil:
		return childActive
	case j.Status.Succeeded == j.Status.Desired:
		return childSucceeded
	}
	return childFailed
}

// childName is deterministic per run, so that a retried create cannot start a run twice.
func childName(acj *appsv1alpha1.AdvancedCronJob, run time.Time) string {
	return fmt.Sprintf("%s-%d", acj.Name, run.Unix())
}

// buildChild makes the job for the run at run from the template, owned by acj.
func buildChild(acj *appsv1alpha1.AdvancedCronJob, run time.Time, scheme *runtime.Scheme) (client.Object, error) {
	meta := func(tmpl metav1.ObjectMeta) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: childName(acj, run), Namespace: acj.Namespace, Labels: map[string]string{}, Annotations: map[string]string{}}
		for k, v := range tmpl.Labels {
			m.Labels[k] = v
		}
		for k, v := range tmpl.Annotations {
			m.Annotations[k] = v
		}
		m.Annotations[ScheduledAtAnnotation] = run.UTC().Format(time.RFC3339)
		return m
	}
	var obj client.Object
	switch t := acj.Spec.Template; templateKind(acj) {
	case appsv1alpha1.JobTemplate:
		obj = &batchv1.Job{ObjectMeta: meta(t.JobTemplate.ObjectMeta), Spec: *t.JobTemplate.Spec.DeepCopy()}
	case appsv1alpha1.BroadcastJobTemplate:
		obj = &appsv1alpha1.BroadcastJob{ObjectMeta: meta(t.BroadcastJobTemplate.ObjectMeta), Spec: *t.BroadcastJobTemplate.Spec.DeepCopy()}
	case appsv1alpha1.ImageListPullJobTemplate:
		obj = &appsv1alpha1.ImageListPullJob{ObjectMeta: meta(t.ImageListPullJobTemplate.ObjectMeta), Spec: *t.ImageListPullJobTemplate.Spec.DeepCopy()}
	default:
		return nil, fmt.Errorf("spec.template sets none of jobTemplate, broadcastJobTemplate and imageListPullJobTemplate")
	}
	if err := ctrl.SetControllerReference(acj, obj, scheme); err != nil {
		return nil, fmt.Errorf("set owner of %s: %w", obj.GetName(), err)
	}
	return obj, nil
}

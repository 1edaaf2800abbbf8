package imagelistpulljob

import (
	"fmt"
	"reflect"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// plan is what a pass changes among the children.
type plan struct {
	// create are the images that need a new child, in spec order.
	create []string
	// remove are the children to delete, by name.
	remove []string
}

// planChildren compares the children (by image) with the spec: an image without a child gets
// one; a child whose image is no longer listed, or whose template differs from the job's, is
// removed, and its image gets a new child.
func planChildren(job *appsv1alpha1.ImageListPullJob, children map[string]*appsv1alpha1.ImagePullJob) plan {
	var p plan
	listed := map[string]bool{}
	for _, image := range job.Spec.Images {
		if listed[image] {
			continue
		}
		listed[image] = true
		child, ok := children[image]
		switch {
		case !ok:
			p.create = append(p.create, image)
		case !reflect.DeepEqual(child.Spec.ImagePullJobTemplate, job.Spec.ImagePullJobTemplate):
			p.remove = append(p.remove, child.Name)
			p.create = append(p.create, image)
		}
	}
	for image, child := range children {
		if !listed[image] {
			p.remove = append(p.remove, child.Name)
		}
	}
	sort.Strings(p.remove)
	return p
}

// failedMessage points at the child that holds the per-node details.
func failedMessage(child string) string {
	return fmt.Sprintf("Please check for details which nodes failed by 'kubectl get ImagePullJob %s'.", child)
}

// computeStatus aggregates the children that have started. A child is active while any node
// pulls, completed when every node finished, succeeded when every node succeeded. With
// completionPolicy Always the job completes when every image's child completed.
func computeStatus(job *appsv1alpha1.ImageListPullJob, children map[string]*appsv1alpha1.ImagePullJob, now time.Time) appsv1alpha1.ImageListPullJobStatus {
	stamp := metav1.NewTime(now)
	st := appsv1alpha1.ImageListPullJobStatus{Desired: int32(len(job.Spec.Images)), StartTime: job.Status.StartTime}
	if st.StartTime == nil {
		st.StartTime = &stamp
	}
	images := make([]string, 0, len(children))
	for image := range children {
		images = append(images, image)
	}
	sort.Strings(images)
	for _, image := range images {
		c := children[image].Status
		if c.StartTime == nil {
			continue
		}
		if c.Active > 0 {
			st.Active++
		}
		if c.Failed > 0 {
			st.FailedImageStatuses = append(st.FailedImageStatuses, &appsv1alpha1.FailedImageStatus{
				ImagePullJob: children[image].Name, Name: image, Message: failedMessage(children[image].Name)})
		}
		if c.Desired == c.Failed+c.Succeeded {
			st.Completed++
		}
		if c.Desired == c.Succeeded {
			st.Succeeded++
		}
	}
	if job.Spec.CompletionPolicy.Type != appsv1alpha1.Never && st.Desired == st.Completed {
		st.CompletionTime = &stamp
	}
	return st
}

// statusEqual compares statuses at the wire's one-second resolution.
func statusEqual(a, b appsv1alpha1.ImageListPullJobStatus) bool {
	a2, b2 := a.DeepCopy(), b.DeepCopy()
	for _, s := range []*appsv1alpha1.ImageListPullJobStatus{a2, b2} {
		if s.StartTime != nil {
			t := metav1.Unix(s.StartTime.Unix(), 0)
			s.StartTime = &t
		}
		if s.CompletionTime != nil {
			t := metav1.Unix(s.CompletionTime.Unix(), 0)
			s.CompletionTime = &t
		}
	}
	return reflect.DeepEqual(a2, b2)
}

package nodeimage

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// responseTimeout is how long the daemon has to report a tag it was given before the manager
// marks it Failed.
const responseTimeout = time.Minute

const (
	msgNoResponse = "node has not responded for a long time"
	msgDeadline   = "pulling exceeds the activeDeadlineSeconds"
)

// statusChange is what expireStatus decided.
type statusChange struct {
	// failed lists "name:tag" of the tags it marked Failed.
	failed []string
	// requeueAfter is when the next tag can time out; zero when none can.
	requeueAfter time.Duration
}

// expireStatus marks Failed, in a copy of ni's status, the tags the daemon never answered within
// responseTimeout and those still unfinished past activeDeadlineSeconds (plus responseTimeout,
// so a slow daemon start does not count against the pull). When it marks any, the counters are
// recomputed from the tags the spec still holds. It returns the new status and what changed.
func expireStatus(ni *appsv1alpha1.NodeImage, now time.Time) (appsv1alpha1.NodeImageStatus, statusChange) {
	var ch statusChange
	st := *ni.Status.DeepCopy()
	stamp := metav1.NewTime(now)
	for name, spec := range ni.Spec.Images {
		img := st.ImageStatuses[name]
		for _, tag := range spec.Tags {
			if tag.CreatedAt == nil {
				continue
			}
			i := indexOfTag(img.Tags, tag.Tag)
			if i < 0 || img.Tags[i].Version != tag.Version {
				if left := responseTimeout - now.Sub(tag.CreatedAt.Time); left > 0 {
					ch.wait(left)
					continue
				}
				failed := appsv1alpha1.ImageTagStatus{Tag: tag.Tag, Phase: appsv1alpha1.ImagePhaseFailed, Version: tag.Version,
					CompletionTime: &stamp, Message: msgNoResponse}
				if i < 0 {
					img.Tags = append(img.Tags, failed)
				} else {
					failed.StartTime = img.Tags[i].StartTime
					img.Tags[i] = failed
				}
				ch.failed = append(ch.failed, name+":"+tag.Tag)
				continue
			}
			ts := &img.Tags[i]
			if ts.CompletionTime != nil || tag.PullPolicy == nil || tag.PullPolicy.ActiveDeadlineSeconds == nil {
				continue
			}
			deadline := time.Duration(*tag.PullPolicy.ActiveDeadlineSeconds)*time.Second + responseTimeout
			if left := deadline - now.Sub(tag.CreatedAt.Time); left > 0 {
				ch.wait(left)
				continue
			}
			ts.Phase, ts.CompletionTime, ts.Message = appsv1alpha1.ImagePhaseFailed, &stamp, msgDeadline
			ch.failed = append(ch.failed, name+":"+tag.Tag)
		}
		if len(img.Tags) > 0 {
			if st.ImageStatuses == nil {
				st.ImageStatuses = map[string]appsv1alpha1.ImageStatus{}
			}
			sort.SliceStable(img.Tags, func(i, j int) bool { return img.Tags[i].Tag < img.Tags[j].Tag })
			st.ImageStatuses[name] = img
		}
	}
	if len(ch.failed) > 0 {
		recount(ni.Spec, &st)
	}
	return st, ch
}

func (c *statusChange) wait(d time.Duration) {
	if c.requeueAfter == 0 || d < c.requeueAfter {
		c.requeueAfter = d
	}
}

// recount drops status tags the spec no longer holds and recomputes the counters.
func recount(spec appsv1alpha1.NodeImageSpec, st *appsv1alpha1.NodeImageStatus) {
	var desired, succeeded, failed, pulling, waiting int32
	kept := map[string]appsv1alpha1.ImageStatus{}
	for name, img := range spec.Images {
		desired += int32(len(img.Tags))
		var tags []appsv1alpha1.ImageTagStatus
		for _, ts := range st.ImageStatuses[name].Tags {
			if indexOfSpecTag(img.Tags, ts.Tag) < 0 {
				continue
			}
			tags = append(tags, ts)
			switch ts.Phase {
			case appsv1alpha1.ImagePhaseSucceeded:
				succeeded++
			case appsv1alpha1.ImagePhaseFailed:
				failed++
			case appsv1alpha1.ImagePhasePulling:
				pulling++
			case appsv1alpha1.ImagePhaseWaiting:
				waiting++
			}
		}
		if len(tags) > 0 {
			kept[name] = appsv1alpha1.ImageStatus{Tags: tags}
		}
	}
	st.ImageStatuses = kept
	if len(kept) == 0 {
		st.ImageStatuses = nil
	}
	st.Desired, st.Succeeded, st.Failed, st.Pulling, st.Waiting = desired, succeeded, failed, pulling, waiting
}

func indexOfTag(tags []appsv1alpha1.ImageTagStatus, tag string) int {
	for i := range tags {
		if tags[i].Tag == tag {
			return i
		}
	}
	return -1
}

func indexOfSpecTag(tags []appsv1alpha1.ImageTagSpec, tag string) int {
	for i := range tags {
		if tags[i].Tag == tag {
			return i
		}
	}
	return -1
}

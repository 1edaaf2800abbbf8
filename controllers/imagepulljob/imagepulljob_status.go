package imagepulljob

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

const (
	msgCompleted = "job has completed"
	msgDeadline  = "job exceeds activeDeadlineSeconds"
)

// progress is where each selected NodeImage stands for the job's image.
type progress struct {
	// notSynced are NodeImages that do not hold the job's tag (or its secrets) yet.
	notSynced []string
	pulling   []string
	succeeded []string
	failed    []string
}

// nodeProgress sorts the NodeImages by what the daemons reported for the job's tag. A tag the
// job owns counts only once the daemon reports the spec's version of it; until then it is
// pulling. A NodeImage missing one of the job's secret copies is not synced yet.
func nodeProgress(job *appsv1alpha1.ImagePullJob, image, tag string, nis []*appsv1alpha1.NodeImage, secrets []appsv1alpha1.ReferenceObject) progress {
	var p progress
	for _, ni := range nis {
		version, ok := ownedTagVersion(ni, job, image, tag, secrets)
		if !ok {
			p.notSynced = append(p.notSynced, ni.Name)
			continue
		}
		phase := appsv1alpha1.ImagePhasePulling
		for _, ts := range ni.Status.ImageStatuses[image].Tags {
			if ts.Tag == tag && ts.Version == version {
				phase = ts.Phase
			}
		}
		switch phase {
		case appsv1alpha1.ImagePhaseSucceeded:
			p.succeeded = append(p.succeeded, ni.Name)
		case appsv1alpha1.ImagePhaseFailed:
			p.failed = append(p.failed, ni.Name)
		default:
			p.pulling = append(p.pulling, ni.Name)
		}
	}
	return p
}

// ownedTagVersion is the version of the job's tag in ni's spec, when the job owns it there and
// the image lists every secret copy.
func ownedTagVersion(ni *appsv1alpha1.NodeImage, job *appsv1alpha1.ImagePullJob, image, tag string, secrets []appsv1alpha1.ReferenceObject) (int64, bool) {
	spec, ok := ni.Spec.Images[image]
	if !ok {
		return 0, false
	}
	for _, s := range secrets {
		if !containsRef(spec.PullSecrets, s) {
			return 0, false
		}
	}
	for _, t := range spec.Tags {
		if t.Tag != tag {
			continue
		}
		for _, ref := range t.OwnerReferences {
			if ref.UID == job.UID {
				return t.Version, true
			}
		}
	}
	return 0, false
}

// computeStatus is the job's status from the NodeImages' progress at now. With completionPolicy
// Always the job completes when every node has succeeded or failed, or, with
// activeDeadlineSeconds, when the deadline passes: then every unfinished node counts as failed.
// A job with policy Never never completes.
func computeStatus(job *appsv1alpha1.ImagePullJob, desired int, p progress, now time.Time) appsv1alpha1.ImagePullJobStatus {
	stamp := metav1.NewTime(now)
	st := appsv1alpha1.ImagePullJobStatus{StartTime: job.Status.StartTime, Desired: int32(desired)}
	if st.StartTime == nil {
		st.StartTime = &stamp
	}
	always := job.Spec.CompletionPolicy.Type != appsv1alpha1.Never
	failed := append([]string(nil), p.failed...)
	finished := len(p.succeeded) + len(p.failed)
	if ads := job.Spec.CompletionPolicy.ActiveDeadlineSeconds; always && ads != nil && finished != desired &&
		now.Sub(st.StartTime.Time) >= time.Duration(*ads)*time.Second {
		failed = append(failed, p.pulling...)
		failed = append(failed, p.notSynced...)
		sort.Strings(failed)
		st.Succeeded, st.Failed, st.FailedNodes = int32(len(p.succeeded)), int32(len(failed)), failed
		st.CompletionTime, st.Message = &stamp, msgDeadline
		return st
	}
	sort.Strings(failed)
	st.Active, st.Succeeded, st.Failed = int32(len(p.pulling)), int32(len(p.succeeded)), int32(len(failed))
	if len(failed) > 0 {
		st.FailedNodes = failed
	}
	if always && finished == desired {
		st.CompletionTime = &stamp
	}
	st.Message = statusMessage(st)
	return st
}

func statusMessage(st appsv1alpha1.ImagePullJobStatus) string {
	if st.CompletionTime != nil {
		return msgCompleted
	}
	if st.Desired == 0 {
		return "job is running, no progress"
	}
	return fmt.Sprintf("job is running, progress %.1f%%", 100*float64(st.Succeeded+st.Failed)/float64(st.Desired))
}

// statusEqual compares statuses ignoring the timestamps' sub-second part lost on the wire.
func statusEqual(a, b appsv1alpha1.ImagePullJobStatus) bool {
	return sameTime(a.StartTime, b.StartTime) && sameTime(a.CompletionTime, b.CompletionTime) &&
		a.Desired == b.Desired && a.Active == b.Active && a.Succeeded == b.Succeeded && a.Failed == b.Failed &&
		a.Message == b.Message && fmt.Sprint(a.FailedNodes) == fmt.Sprint(b.FailedNodes)
}

func sameTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Unix() == b.Unix()
}

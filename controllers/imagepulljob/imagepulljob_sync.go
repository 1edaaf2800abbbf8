package imagepulljob

import (
	"hash/fnv"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

const (
	defaultParallelism = 1
	// Tag TTLs for policy Never: a day, spread over twenty minutes.
	ttlForNever    = 24 * 3600
	ttlNeverSpread = 1200
	// activeDeadlineForNever bounds each node's pull of a Never job.
	activeDeadlineForNever = int64(1800)
	// Tag TTLs for policy Always are the job's TTL (or deadline, or timeout x backoff), plus
	// five to ten minutes.
	ttlAlwaysExtra  = 300
	ttlAlwaysSpread = 300
)

// syncWindow returns the NodeImages to write the tag into now: as many of notSynced, in order,
// as parallelism leaves room for beside the active ones. A percentage is of desired, rounded up.
func syncWindow(parallelism *intstr.IntOrString, desired, active int, notSynced []string) []string {
	limit := defaultParallelism
	if parallelism != nil {
		if v, err := intstr.GetScaledValueFromIntOrPercent(parallelism, desired, true); err == nil {
			limit = v
		}
	}
	room := limit - active
	if room <= 0 {
		return nil
	}
	if room > len(notSynced) {
		room = len(notSynced)
	}
	return notSynced[:room]
}

// ownerRef is how a NodeImage tag names its job.
func ownerRef(job *appsv1alpha1.ImagePullJob) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: controllerKind.GroupVersion().String(), Kind: controllerKind.Kind,
		Namespace: job.Namespace, Name: job.Name, UID: job.UID}
}

// tagPullPolicy is the per-node pull policy the job hands the daemon.
func tagPullPolicy(job *appsv1alpha1.ImagePullJob) *appsv1alpha1.ImageTagPullPolicy {
	p := &appsv1alpha1.ImageTagPullPolicy{}
	if pp := job.Spec.PullPolicy; pp != nil {
		p.TimeoutSeconds, p.BackoffLimit = pp.TimeoutSeconds, pp.BackoffLimit
	}
	cp := job.Spec.CompletionPolicy
	if cp.Type == appsv1alpha1.Never {
		ttl := int32(ttlForNever - ttlNeverSpread/2 + spread(job, ttlNeverSpread))
		ads := activeDeadlineForNever
		p.TTLSecondsAfterFinished, p.ActiveDeadlineSeconds = &ttl, &ads
		return p
	}
	var ttl int32
	switch {
	case cp.TTLSecondsAfterFinished != nil:
		ttl = *cp.TTLSecondsAfterFinished
	case cp.ActiveDeadlineSeconds != nil:
		ttl = int32(*cp.ActiveDeadlineSeconds)
	default:
		timeout, backoff := appsv1alpha1.DefaultPullTimeoutSeconds, appsv1alpha1.DefaultPullBackoffLimit
		if p.TimeoutSeconds != nil {
			timeout = *p.TimeoutSeconds
		}
		if p.BackoffLimit != nil {
			backoff = *p.BackoffLimit
		}
		ttl = timeout * backoff
	}
	ttl += ttlAlwaysExtra + spread(job, ttlAlwaysSpread)
	p.TTLSecondsAfterFinished = &ttl
	if cp.ActiveDeadlineSeconds != nil {
		ads := *cp.ActiveDeadlineSeconds
		p.ActiveDeadlineSeconds = &ads
	}
	return p
}

// spread is a number in [0, n) fixed per job, so the tags of many jobs do not expire at once
// and a job's tags agree across reconciles.
func spread(job *appsv1alpha1.ImagePullJob, n int32) int32 {
	h := fnv.New32a()
	h.Write([]byte(job.UID))
	return int32(h.Sum32() % uint32(n))
}

// addTag writes the job's tag into ni's spec: the job joins the owners of an existing tag (a new
// version, so the daemon pulls again) or a new tag starts one past the version the daemon last
// reported. The secret copies join the image's pull secrets. It reports whether ni changed.
func addTag(ni *appsv1alpha1.NodeImage, job *appsv1alpha1.ImagePullJob, image, tag string, secrets []appsv1alpha1.ReferenceObject, now time.Time) bool {
	if ni.Spec.Images == nil {
		ni.Spec.Images = map[string]appsv1alpha1.ImageSpec{}
	}
	spec := ni.Spec.Images[image]
	changed := false
	for _, s := range secrets {
		if !containsRef(spec.PullSecrets, s) {
			spec.PullSecrets = append(spec.PullSecrets, s)
			changed = true
		}
	}
	if job.Spec.SandboxConfig != nil {
		spec.SandboxConfig = job.Spec.SandboxConfig.DeepCopy()
	}
	ref := ownerRef(job)
	stamp := metav1.NewTime(now)
	found := false
	for i := range spec.Tags {
		t := &spec.Tags[i]
		if t.Tag != tag {
			continue
		}
		found = true
		if hasOwner(t.OwnerReferences, job) {
			break
		}
		t.Version++
		t.OwnerReferences = append(t.OwnerReferences, ref)
		t.CreatedAt = &stamp
		t.PullPolicy = tagPullPolicy(job)
		t.ImagePullPolicy = job.Spec.ImagePullPolicy
		changed = true
		break
	}
	if !found {
		version := int64(0)
		for _, ts := range ni.Status.ImageStatuses[image].Tags {
			if ts.Tag == tag {
				version = ts.Version + 1
			}
		}
		spec.Tags = append(spec.Tags, appsv1alpha1.ImageTagSpec{Tag: tag, Version: version, CreatedAt: &stamp,
			PullPolicy: tagPullPolicy(job), OwnerReferences: []corev1.ObjectReference{ref}, ImagePullPolicy: job.Spec.ImagePullPolicy})
		changed = true
	}
	sort.SliceStable(spec.Tags, func(i, j int) bool { return spec.Tags[i].Tag < spec.Tags[j].Tag })
	ni.Spec.Images[image] = spec
	return changed
}

func hasOwner(refs []corev1.ObjectReference, job *appsv1alpha1.ImagePullJob) bool {
	for _, r := range refs {
		if r.UID == job.UID {
			return true
		}
	}
	return false
}

func containsRef(refs []appsv1alpha1.ReferenceObject, r appsv1alpha1.ReferenceObject) bool {
	for _, x := range refs {
		if x.Namespace == r.Namespace && x.Name == r.Name {
			return true
		}
	}
	return false
}

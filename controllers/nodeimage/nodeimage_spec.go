package nodeimage

import (
	"fmt"
	"maps"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// jobKind is the owner kind whose existence decides whether a tag stays.
const jobKind = "ImagePullJob"

// ownerState answers whether an owner reference of a tag still points at a live object.
type ownerState func(ref corev1.ObjectReference) bool

// specChange is what cleanSpec decided.
type specChange struct {
	// modified says the NodeImage must be written.
	modified bool
	// reasons say why, for the log.
	reasons []string
	// requeueAfter is when the next tag reaches its TTL; zero when none waits.
	requeueAfter time.Duration
}

// cleanSpec brings ni's labels in line with the node's and drops the tags that have no reason to
// stay: no createdAt, every ImagePullJob owner gone, or finished longer than the tag's TTL ago.
// Owners of other kinds are kept as they are. It edits ni in place.
func cleanSpec(ni *appsv1alpha1.NodeImage, node *corev1.Node, alive ownerState, now time.Time) specChange {
	var ch specChange
	if node != nil && !labelsEqual(ni.Labels, node.Labels) {
		ni.Labels = maps.Clone(node.Labels)
		ch.modified = true
		ch.reasons = append(ch.reasons, "node labels changed")
	}
	images := make(map[string]appsv1alpha1.ImageSpec, len(ni.Spec.Images))
	for name, spec := range ni.Spec.Images {
		var kept []appsv1alpha1.ImageTagSpec
		for _, tag := range spec.Tags {
			full := name + ":" + tag.Tag
			if tag.CreatedAt == nil {
				ch.drop(fmt.Sprintf("%s has no createdAt", full))
				continue
			}
			owners := liveOwners(tag.OwnerReferences, alive)
			if len(owners) != len(tag.OwnerReferences) {
				ch.modified = true
				if len(owners) == 0 {
					ch.reasons = append(ch.reasons, fmt.Sprintf("%s has no owner left", full))
					continue
				}
				ch.reasons = append(ch.reasons, fmt.Sprintf("%s lost owners", full))
				tag.OwnerReferences = owners
			}
			if left, ok := ttlLeft(ni, name, tag, now); ok {
				if left <= 0 {
					ch.drop(fmt.Sprintf("%s is past its ttlSecondsAfterFinished", full))
					continue
				}
				ch.wait(left)
			}
			kept = append(kept, tag)
		}
		if len(kept) == 0 {
			ch.drop(fmt.Sprintf("%s has no tags left", name))
			continue
		}
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].Tag < kept[j].Tag })
		spec.Tags = kept
		images[name] = spec
	}
	if ch.modified {
		ni.Spec.Images = images
		if len(images) == 0 {
			ni.Spec.Images = nil
		}
	}
	return ch
}

func (c *specChange) drop(reason string) {
	c.modified = true
	c.reasons = append(c.reasons, reason)
}

func (c *specChange) wait(d time.Duration) {
	if c.requeueAfter == 0 || d < c.requeueAfter {
		c.requeueAfter = d
	}
}

func liveOwners(refs []corev1.ObjectReference, alive ownerState) []corev1.ObjectReference {
	var out []corev1.ObjectReference
	for _, ref := range refs {
		gvk := ref.GroupVersionKind()
		if gvk.Group != appsv1alpha1.GroupVersion.Group || gvk.Kind != jobKind || alive(ref) {
			out = append(out, ref)
		}
	}
	return out
}

// ttlLeft is how long the tag may stay after the daemon finished it; ok is false when the tag
// has no TTL or the daemon has not finished this version.
func ttlLeft(ni *appsv1alpha1.NodeImage, name string, tag appsv1alpha1.ImageTagSpec, now time.Time) (time.Duration, bool) {
	if tag.PullPolicy == nil || tag.PullPolicy.TTLSecondsAfterFinished == nil {
		return 0, false
	}
	st := tagStatus(ni, name, tag.Tag)
	if st == nil || st.Version != tag.Version || st.CompletionTime == nil {
		return 0, false
	}
	ttl := time.Duration(*tag.PullPolicy.TTLSecondsAfterFinished) * time.Second
	return ttl - now.Sub(st.CompletionTime.Time), true
}

func tagStatus(ni *appsv1alpha1.NodeImage, name, tag string) *appsv1alpha1.ImageTagStatus {
	st, ok := ni.Status.ImageStatuses[name]
	if !ok {
		return nil
	}
	for i := range st.Tags {
		if st.Tags[i].Tag == tag {
			return &st.Tags[i]
		}
	}
	return nil
}

func labelsEqual(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}

// jobKey is where an owner reference points.
func jobKey(ref corev1.ObjectReference) types.NamespacedName {
	return types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
}

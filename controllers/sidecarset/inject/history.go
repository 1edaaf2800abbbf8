package inject

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// RevisionNameLabel is the label on a SidecarSet's ControllerRevisions naming the SidecarSet.
// The revisions live in the manager's namespace, since a SidecarSet has none.
const RevisionNameLabel = "kruise.io/sidecarset-name"

// revisionData is what a ControllerRevision of a SidecarSet holds: the fields that decide what
// is injected into a pod. As in 1.8, data.spec always has all five, null when empty, and a
// "$patch": "replace" directive; the fields are in the order encoding/json gives a map, so the
// bytes are those 1.8 writes for the same spec.
type revisionData struct {
	Spec revisionSpec `json:"spec"`
}

type revisionSpec struct {
	Patch            string                                    `json:"$patch"`
	Containers       []appsv1alpha1.SidecarContainer           `json:"containers"`
	ImagePullSecrets []corev1.LocalObjectReference             `json:"imagePullSecrets"`
	InitContainers   []appsv1alpha1.SidecarContainer           `json:"initContainers"`
	PatchPodMetadata []appsv1alpha1.SidecarSetPatchPodMetadata `json:"patchPodMetadata"`
	Volumes          []corev1.Volume                           `json:"volumes"`
}

// nilIfEmpty is s, or nil when it has no element, so that an empty list is written as null.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// RevisionData encodes the parts of a SidecarSet a ControllerRevision keeps.
func RevisionData(s *appsv1alpha1.SidecarSet) ([]byte, error) {
	raw, err := json.Marshal(revisionData{Spec: revisionSpec{Patch: "replace",
		InitContainers: nilIfEmpty(s.Spec.InitContainers), Containers: nilIfEmpty(s.Spec.Containers),
		Volumes: nilIfEmpty(s.Spec.Volumes), ImagePullSecrets: nilIfEmpty(s.Spec.ImagePullSecrets),
		PatchPodMetadata: nilIfEmpty(s.Spec.PatchPodMetadata),
	}})
	if err != nil {
		return nil, fmt.Errorf("encode sidecarset %s revision: %w", s.Name, err)
	}
	return raw, nil
}

// Restore returns the SidecarSet as it was at revision rev: latest with the kept fields taken
// from rev, its hashes recomputed and status.latestRevision naming rev, so that pods injected
// from it record that revision.
func Restore(latest *appsv1alpha1.SidecarSet, rev *appsv1.ControllerRevision) (*appsv1alpha1.SidecarSet, error) {
	var d revisionData
	if err := json.Unmarshal(rev.Data.Raw, &d); err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", rev.Name, err)
	}
	s := latest.DeepCopy()
	s.Spec.InitContainers = d.Spec.InitContainers
	s.Spec.Containers = d.Spec.Containers
	s.Spec.Volumes = d.Spec.Volumes
	s.Spec.ImagePullSecrets = d.Spec.ImagePullSecrets
	s.Spec.PatchPodMetadata = d.Spec.PatchPodMetadata
	h, err := Hash(s)
	if err != nil {
		return nil, err
	}
	hn, err := HashWithoutImage(s)
	if err != nil {
		return nil, err
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[appsv1alpha1.SidecarSetHashAnnotation] = h
	s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation] = hn
	s.Status.LatestRevision = rev.Name
	return s, nil
}

// FindPinned returns, among a SidecarSet's revisions sorted oldest first, the one
// injectionStrategy.revision names: by revisionName, or the newest carrying the customVersion
// label value. nil when none is pinned or none matches.
func FindPinned(s *appsv1alpha1.SidecarSet, sorted []*appsv1.ControllerRevision) *appsv1.ControllerRevision {
	r := s.Spec.InjectionStrategy.Revision
	if r == nil {
		return nil
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		rev := sorted[i]
		if r.RevisionName != nil && *r.RevisionName != "" {
			if rev.Name == *r.RevisionName {
				return rev
			}
			continue
		}
		if r.CustomVersion != nil && rev.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] == *r.CustomVersion {
			return rev
		}
	}
	return nil
}

package cloneset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/dump"
)

// claimsHashAnnotation is the annotation on a CloneSet's revisions with the hash of the
// volumeClaimTemplates the CloneSet had when the revision was made ("" for none), as 1.8 writes
// it. Since the claim templates are not part of a revision's data, it is how a revision tells
// that its pods' claims differ from those the update revision's pods would get.
const claimsHashAnnotation = "kruise.io/cloneset-volumeclaimtemplate-hash"

// claimsHash is the value of claimsHashAnnotation for templates: FNV-32a of the JSON of the
// templates' names and specs, sorted by name, as 1.8 computes it, so that revisions 1.8 made
// compare with ours.
func claimsHash(templates []corev1.PersistentVolumeClaim) (string, error) {
	if len(templates) == 0 {
		return "", nil
	}
	claims := make([]corev1.PersistentVolumeClaim, len(templates))
	for i, t := range templates {
		claims[i] = corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: t.Name}, Spec: t.Spec}
	}
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
	raw, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("encode spec.volumeClaimTemplates: %w", err)
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(raw))
	return strconv.FormatUint(uint64(h.Sum32()), 10), nil
}

// claimsChanged reports whether pods of revision from have other claims than pods of revision
// update would get: both revisions carry claimsHashAnnotation and the hashes differ. A revision
// without the annotation (made before it was written, or gone from history) is taken to match,
// so that turning RecreatePodWhenChangeVCTInCloneSetGate on recreates nothing by itself.
func claimsChanged(from, update *appsv1.ControllerRevision) bool {
	if from == nil || update == nil {
		return false
	}
	a, okA := from.Annotations[claimsHashAnnotation]
	b, okB := update.Annotations[claimsHashAnnotation]
	return okA && okB && a != b
}

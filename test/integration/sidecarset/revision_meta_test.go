package sidecarset

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// TestSidecarSetRevisionCarriesTheSidecarSetsLabelsAndAnnotations checks a SidecarSet's
// ControllerRevision carries the SidecarSet's own labels and annotations, the revision hashes
// among them, as 1.8 writes it, so that `kubectl get controllerrevisions -l <label>` finds the
// revisions of the SidecarSets carrying that label.
func TestSidecarSetRevisionCarriesTheSidecarSetsLabelsAndAnnotations(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("revision-meta", ns)
	s.Labels = map[string]string{"team": "payments"}
	s.Annotations = map[string]string{"owner": "alice"}
	latest := createWithRevision(t, s)
	got, err := getSidecarSet(context.Background(), "revision-meta")
	if err != nil {
		t.Fatal(err)
	}
	var rev appsv1.ControllerRevision
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: harness.ManagerNamespace, Name: latest}, &rev); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"team": "payments", "kruise.io/sidecarset-name": "revision-meta"}
	for k, v := range wantLabels {
		if rev.Labels[k] != v {
			t.Errorf("revision label %s = %q, want %q (labels %v)", k, rev.Labels[k], v, rev.Labels)
		}
	}
	wantAnnotations := map[string]string{
		"owner":                               "alice",
		appsv1alpha1.SidecarSetHashAnnotation: got.Annotations[appsv1alpha1.SidecarSetHashAnnotation],
		appsv1alpha1.SidecarSetHashWithoutImageAnnotation: got.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation],
	}
	for k, v := range wantAnnotations {
		if v == "" || rev.Annotations[k] != v {
			t.Errorf("revision annotation %s = %q, want %q (annotations %v)", k, rev.Annotations[k], v, rev.Annotations)
		}
	}
}

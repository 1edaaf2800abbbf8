package cloneset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func claimTemplate(name, size string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"ignored": "by the hash"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

func TestClaimsHash(t *testing.T) {
	hash := func(ts ...corev1.PersistentVolumeClaim) string {
		h, err := claimsHash(ts)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a, b := claimTemplate("a", "1Gi"), claimTemplate("b", "1Gi")
	testkit.Diff(t, "no templates", "", hash())
	testkit.Diff(t, "the order of the templates does not matter", hash(a, b), hash(b, a))
	if hash(a, b) == hash(claimTemplate("a", "2Gi"), b) {
		t.Error("a new size did not change the hash")
	}
	plain := claimTemplate("a", "1Gi")
	plain.Labels = nil
	testkit.Diff(t, "only names and specs count", hash(plain), hash(a))
}

func TestClaimsChanged(t *testing.T) {
	rev := func(hash *string) *appsv1.ControllerRevision {
		r := &appsv1.ControllerRevision{}
		if hash != nil {
			r.Annotations = map[string]string{claimsHashAnnotation: *hash}
		}
		return r
	}
	one, two, none := "1", "2", ""
	type tcase struct {
		from, update *appsv1.ControllerRevision
		want         bool
	}
	tests := map[string]tcase{
		"other hashes are a change":                             {from: rev(&one), update: rev(&two), want: true},
		"the same hash is no change":                            {from: rev(&one), update: rev(&one)},
		"templates added where there were none are a change":    {from: rev(&none), update: rev(&one), want: true},
		"a revision without the hash is taken to match":         {from: rev(nil), update: rev(&one)},
		"a revision gone from history is taken to match":        {from: nil, update: rev(&one)},
		"an update revision without the hash is taken to match": {from: rev(&one), update: rev(nil)},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "changed", tc.want, claimsChanged(tc.from, tc.update))
	})
}

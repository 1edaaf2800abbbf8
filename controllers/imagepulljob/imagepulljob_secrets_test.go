package imagepulljob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCopyOf(t *testing.T) {
	src := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cred", UID: "src-uid", ResourceVersion: "7",
			Labels:      map[string]string{"owner": "team"},
			Annotations: map[string]string{"note": "x", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("{}")},
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: DaemonConfigNamespace, GenerateName: "cred-",
			Labels:      map[string]string{"owner": "team", SourceUIDLabel: "src-uid"},
			Annotations: map[string]string{"note": "x", SourceKeyAnnotation: "team/cred", ReferencesAnnotation: "team/a,team/b"}},
		Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("{}")},
	}
	got := copyOf(src, []string{"team/b", "team/a", "team/b"})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, ok := src.Labels[SourceUIDLabel]; ok {
		t.Errorf("copyOf wrote into the source's labels")
	}
}

func TestReferences(t *testing.T) {
	cases := map[string]struct {
		annotation string
		want       []string
		wantHasA   bool
	}{
		"no annotation references nobody":         {annotation: "", want: nil},
		"a list is split on commas":               {annotation: "ns/a,ns/b", want: []string{"ns/a", "ns/b"}, wantHasA: true},
		"blanks and empty items are ignored":      {annotation: " ns/b , ,ns/a", want: []string{"ns/b", "ns/a"}, wantHasA: true},
		"a key is matched whole, not as a prefix": {annotation: "ns/ab", want: []string{"ns/ab"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ReferencesAnnotation: tc.annotation}}}
			if diff := cmp.Diff(tc.want, references(s)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if got := hasKey(s, "ns/a"); got != tc.wantHasA {
				t.Errorf("hasKey(ns/a) = %v, want %v", got, tc.wantHasA)
			}
		})
	}
}

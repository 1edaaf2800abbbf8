package imagepulljob

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
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
	got := copyOf(src, DaemonConfigNamespace, []string{"team/b", "team/a", "team/b"})
	testkit.Diff(t, "copyOf", want, got)
	if _, ok := src.Labels[SourceUIDLabel]; ok {
		t.Errorf("copyOf wrote into the source's labels")
	}
}

func TestReferences(t *testing.T) {
	type tcase struct {
		annotation string
		want       []string
		wantHasA   bool
	}
	cases := map[string]tcase{
		"no annotation references nobody":         {annotation: "", want: nil},
		"a list is split on commas":               {annotation: "ns/a,ns/b", want: []string{"ns/a", "ns/b"}, wantHasA: true},
		"blanks and empty items are ignored":      {annotation: " ns/b , ,ns/a", want: []string{"ns/b", "ns/a"}, wantHasA: true},
		"a key is matched whole, not as a prefix": {annotation: "ns/ab", want: []string{"ns/ab"}},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ReferencesAnnotation: tc.annotation}}}
		testkit.Diff(t, "references(s)", tc.want, references(s))
		if got := hasKey(s, "ns/a"); got != tc.wantHasA {
			t.Errorf("hasKey(ns/a) = %v, want %v", got, tc.wantHasA)
		}
	})
}

// TestSyncCopiesIntoTheConfiguredNamespace proves --daemon-config-namespace reaches the copies:
// they go to the configured namespace, and the default one is never touched.
func TestSyncCopiesIntoTheConfiguredNamespace(t *testing.T) {
	type tcase struct {
		namespace     string
		wantNamespace string
	}
	cases := map[string]tcase{
		"the configured namespace receives the copy": {namespace: "pull-config", wantNamespace: "pull-config"},
		"no configured namespace means the default":  {namespace: "", wantNamespace: DaemonConfigNamespace},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		ctx := context.Background()
		src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cred", UID: "src-uid"}, Data: map[string][]byte{"k": []byte("v")}}
		c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(
			src,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DaemonConfigNamespace}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pull-config"}},
		).Build()
		s := secretSyncer{client: c, reader: c, namespace: tc.namespace}
		refs, err := s.sync(ctx, testJob(func(j *appsv1alpha1.ImagePullJob) { j.Spec.PullSecrets = []string{"cred"} }))
		if err != nil {
			t.Fatal(err)
		}
		var gotRefs []string
		for _, r := range refs {
			gotRefs = append(gotRefs, r.Namespace)
		}
		testkit.Diff(t, "namespaces of the copies handed to NodeImages", []string{tc.wantNamespace}, gotRefs)
		byNamespace := map[string]int{}
		list := &corev1.SecretList{}
		if err := c.List(ctx, list, client.HasLabels{SourceUIDLabel}); err != nil {
			t.Fatal(err)
		}
		for _, sec := range list.Items {
			byNamespace[sec.Namespace]++
		}
		testkit.Diff(t, "copies per namespace", map[string]int{tc.wantNamespace: 1}, byNamespace)
	})
}

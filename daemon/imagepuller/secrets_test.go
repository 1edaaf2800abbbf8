package imagepuller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestResolveSecretsStaysInTheConfigNamespace proves --daemon-config-namespace reaches the
// puller: a NodeImage that names a secret elsewhere fails the tag with a message saying why,
// and the secret is not read.
func TestResolveSecretsStaysInTheConfigNamespace(t *testing.T) {
	type tcase struct {
		configNamespace string
		ref             appsv1alpha1.ReferenceObject
		wantAuths       int
		wantErr         string
	}
	cases := map[string]tcase{
		"a secret in the config namespace is read": {
			configNamespace: "pull-config", ref: appsv1alpha1.ReferenceObject{Namespace: "pull-config", Name: "cred"}, wantAuths: 1,
		},
		"a secret in another namespace is refused, naming the flag": {
			configNamespace: "pull-config", ref: appsv1alpha1.ReferenceObject{Namespace: "kube-system", Name: "cred"},
			wantErr: "pull secret kube-system/cred is outside the daemon config namespace pull-config (--daemon-config-namespace)",
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		dockerConfig := []byte(`{"auths":{"registry.example.com":{"username":"u","password":"p"}}}`)
		secret := func(ns string) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cred"}, Type: corev1.SecretTypeDockerConfigJson,
				Data: map[string][]byte{corev1.DockerConfigJsonKey: dockerConfig}}
		}
		live := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(secret("pull-config"), secret("kube-system")).Build()
		p := New(live, live, nil, Options{NodeName: "n1", ConfigNamespace: tc.configNamespace})
		auths, err := p.resolveSecrets(context.Background(), "registry.example.com/app:v1", []appsv1alpha1.ReferenceObject{tc.ref})
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if tc.wantErr == "" && gotErr != "" || !strings.Contains(gotErr, tc.wantErr) {
			t.Errorf("error %q, want one containing %q", gotErr, tc.wantErr)
		}
		testkit.Diff(t, "auths", tc.wantAuths, len(auths))
	})
}

// TestReadSecretPrefersTheCache proves where a pull secret comes from: the cache when it holds
// the secret, the apiserver when it does not yet (a copy the manager has just made).
func TestReadSecretPrefersTheCache(t *testing.T) {
	type tcase struct {
		inCache  bool
		wantLive int
	}
	cases := map[string]tcase{
		"a secret the cache holds is not read from the apiserver": {inCache: true, wantLive: 0},
		"a secret the cache lacks is read from the apiserver":     {inCache: false, wantLive: 1},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "pull-config", Name: "cred"}}
		cached := fake.NewClientBuilder().WithScheme(apis.NewScheme())
		if tc.inCache {
			cached = cached.WithObjects(secret.DeepCopy())
		}
		liveGets := 0
		live := interceptor.NewClient(fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(secret.DeepCopy()).Build(), interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				liveGets++
				return c.Get(ctx, key, obj, opts...)
			},
		})
		p := New(live, live, nil, Options{NodeName: "n1", ConfigNamespace: "pull-config", Secrets: cached.Build()})
		got := &corev1.Secret{}
		if err := p.readSecret(context.Background(), client.ObjectKeyFromObject(secret), got); err != nil || got.Name != secret.Name {
			t.Fatalf("read %s: %v, got %q", secret.Name, err, got.Name)
		}
		testkit.Diff(t, "live reads", tc.wantLive, liveGets)
	})
}

package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	kdaemon "github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// dockerConfigSecret is a pull secret in the daemon config namespace holding user:pass for the
// auth registry.
func dockerConfigSecret(name, user, pass string) *corev1.Secret {
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{authReg.host(): map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
	}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: kdaemon.ConfigNamespace, Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
}

// TestPullSecretsReadFromTheCache proves that the daemon reads pull secrets from its cache of
// the config namespace, not from the apiserver once per tag, and that the cache follows the
// secret: a later change of it is what later pulls use.
func TestPullSecretsReadFromTheCache(t *testing.T) {
	secret := dockerConfigSecret("cached-pull", authReg.user, authReg.pass)
	framework.Create(t, env.Client, secret)
	ref := appsv1alpha1.ReferenceObject{Namespace: secret.Namespace, Name: secret.Name}
	secretPath := fmt.Sprintf("/api/v1/namespaces/%s/secrets/%s", secret.Namespace, secret.Name)
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, tag := range []string{"a", "b", "c"} {
		pushed, err := authReg.push(img, "cached:"+tag)
		if err != nil {
			t.Fatal(err)
		}
		tags = append(tags, pushed)
	}
	image, _ := splitRef(tags[0])
	pull := func(t *testing.T, tag string, version int64) appsv1alpha1.ImageTagStatus {
		t.Helper()
		// Always: the tags share their layers, and each pull must ask the registry with the secret.
		setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: tag, Version: version, PullPolicy: policy(0), ImagePullPolicy: appsv1alpha1.PullAlways}, ref)
		return waitTagVersion(t, image, tag, version)
	}

	t.Run("tags after the first read the secret from the cache, not from the apiserver", func(t *testing.T) {
		// The first pull may read the secret live, if the cache has not seen it yet.
		if st := pull(t, "a", 1); st.Phase != appsv1alpha1.ImagePhaseSucceeded {
			t.Fatalf("tag a: %+v, want Succeeded", st)
		}
		before := daemonGets.count(secretPath)
		for _, tag := range []string{"b", "c"} {
			if st := pull(t, tag, 1); st.Phase != appsv1alpha1.ImagePhaseSucceeded {
				t.Fatalf("tag %s: %+v, want Succeeded", tag, st)
			}
		}
		if n := daemonGets.count(secretPath) - before; n != 0 {
			t.Errorf("the daemon read %s from the apiserver %d times for 2 more tags, want 0 (the cache holds it)", secretPath, n)
		}
	})
	t.Run("a changed secret is what later pulls use", func(t *testing.T) {
		wrong := dockerConfigSecret(secret.Name, authReg.user, "wrong")
		patch, _ := json.Marshal(map[string]any{"data": wrong.Data})
		framework.MergePatch(t, env.Client, secret, string(patch))
		// The cache sees the change through its watch, a moment after the write: the tag is
		// pulled again (a new version each time) until a pull has used the new password.
		version := int64(2)
		framework.Eventually(t, framework.Medium, "a pull with the changed secret is refused by the registry", func(ctx context.Context) error {
			version++
			st := pull(t, "a", version)
			return framework.Want(st.Phase == appsv1alpha1.ImagePhaseFailed && strings.Contains(st.Message, "401 Unauthorized"),
				fmt.Sprintf("tag a version %d: %s %q", version, st.Phase, st.Message))
		})
	})
}

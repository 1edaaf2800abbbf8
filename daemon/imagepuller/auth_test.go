package imagepuller

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func dockerJSONSecret(body string) corev1.Secret {
	return corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(body)}}
}

func TestAuthsFor(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))
	type tcase struct {
		image   string
		secrets []corev1.Secret
		want    []*criv1.AuthConfig
	}
	tests := map[string]tcase{
		"a username and password entry for the image's registry is used": {
			image:   "registry.example.com/app/web:1",
			secrets: []corev1.Secret{dockerJSONSecret(`{"auths":{"registry.example.com":{"username":"u","password":"p"}}}`)},
			want:    []*criv1.AuthConfig{{Username: "u", Password: "p"}},
		},
		"the auth field is decoded into username and password": {
			image:   "127.0.0.1:5000/app:v1",
			secrets: []corev1.Secret{dockerJSONSecret(`{"auths":{"http://127.0.0.1:5000/v2/":{"auth":"` + basic + `"}}}`)},
			want:    []*criv1.AuthConfig{{Username: "bob", Password: "s3cret"}},
		},
		"entries of other registries are ignored": {
			image:   "registry.example.com/app:v1",
			secrets: []corev1.Secret{dockerJSONSecret(`{"auths":{"other.example.com":{"username":"u","password":"p"}}}`)},
			want:    nil,
		},
		"a legacy dockercfg secret is read too": {
			image: "registry.example.com/app:v1",
			secrets: []corev1.Secret{{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{
				corev1.DockerConfigKey: []byte(`{"registry.example.com":{"username":"old","password":"pw"}}`)}}},
			want: []*criv1.AuthConfig{{Username: "old", Password: "pw"}},
		},
		"a secret that does not parse gives no credential": {
			image:   "registry.example.com/app:v1",
			secrets: []corev1.Secret{dockerJSONSecret(`not json`)},
			want:    nil,
		},
		"every matching secret is offered, in order": {
			image: "registry.example.com/app:v1",
			secrets: []corev1.Secret{
				dockerJSONSecret(`{"auths":{"registry.example.com":{"username":"a","password":"1"}}}`),
				dockerJSONSecret(`{"auths":{"registry.example.com":{"username":"b","password":"2"}}}`),
			},
			want: []*criv1.AuthConfig{
				{Username: "a", Password: "1"},
				{Username: "b", Password: "2"},
			},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := authsFor(tt.image, tt.secrets)
		if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
			t.Errorf("authsFor (-want +got):\n%s", diff)
		}
	})
}

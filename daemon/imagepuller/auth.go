package imagepuller

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// dockerAuth is one entry of a docker config file.
type dockerAuth struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// authsFor returns, in secret order, every credential of secrets whose registry is the
// image's registry. Entries that do not parse are skipped: a wrong secret is a failed pull
// (the runtime says why), not a daemon error.
func authsFor(image string, secrets []corev1.Secret) []*criv1.AuthConfig {
	ref, err := name.ParseReference(image, name.WeakValidation)
	if err != nil {
		return nil
	}
	want := ref.Context().RegistryStr()
	var out []*criv1.AuthConfig
	for i := range secrets {
		entries := parseDockerConfig(&secrets[i])
		keys := make([]string, 0, len(entries))
		for k := range entries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if registryOfKey(k) != want {
				continue
			}
			a := entries[k]
			// ServerAddress stays empty: the entry is already matched to the image's registry, and
			// containerd 1.6 parses a set address as a URL, refusing host:port and ignoring a bare host.
			cfg := &criv1.AuthConfig{
				Username:      a.Username,
				Password:      a.Password,
				IdentityToken: a.IdentityToken,
				RegistryToken: a.RegistryToken,
			}
			if a.Auth != "" && cfg.Username == "" {
				if raw, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
					if u, p, ok := strings.Cut(string(raw), ":"); ok {
						cfg.Username, cfg.Password = u, p
					}
				}
			}
			out = append(out, cfg)
		}
	}
	return out
}

// parseDockerConfig reads a kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg secret.
func parseDockerConfig(s *corev1.Secret) map[string]dockerAuth {
	if raw, ok := s.Data[corev1.DockerConfigJsonKey]; ok {
		var cfg struct {
			Auths map[string]dockerAuth `json:"auths"`
		}
		if json.Unmarshal(raw, &cfg) == nil {
			return cfg.Auths
		}
	}
	if raw, ok := s.Data[corev1.DockerConfigKey]; ok {
		var cfg map[string]dockerAuth
		if json.Unmarshal(raw, &cfg) == nil {
			return cfg
		}
	}
	return nil
}

// registryOfKey turns a docker config key (host, host:port, or a URL) into the registry name
// the image reference parser uses, so that default-registry aliases compare equal.
func registryOfKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k, _, _ = strings.Cut(k, "/")
	r, err := name.NewRegistry(k, name.WeakValidation)
	if err != nil {
		return k
	}
	return r.RegistryStr()
}

// imageRef joins an image name and a tag (or digest) into one reference.
func imageRef(image, tag string) string {
	if strings.HasPrefix(tag, "sha256:") {
		return fmt.Sprintf("%s@%s", image, tag)
	}
	return fmt.Sprintf("%s:%s", image, tag)
}

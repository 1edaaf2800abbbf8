package imagepulljob

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// SplitImage splits an image reference into the key NodeImage spec.images uses (the short
// repository name: no default registry, no "library/" for official images) and the tag, which
// is "latest" when the reference has none and the digest when it has one.
func SplitImage(ref string) (string, string, error) {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return "", "", fmt.Errorf("parse image %q: %w", ref, err)
	}
	repo := r.Context()
	key := repo.RegistryStr() + "/" + repo.RepositoryStr()
	if repo.RegistryStr() == name.DefaultRegistry {
		key = strings.TrimPrefix(repo.RepositoryStr(), "library/")
	}
	switch t := r.(type) {
	case name.Digest:
		return key, t.DigestStr(), nil
	case name.Tag:
		return key, t.TagStr(), nil
	}
	return key, r.Identifier(), nil
}

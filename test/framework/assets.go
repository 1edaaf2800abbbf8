package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// assetsEnvVar names the folder holding etcd, kube-apiserver and kubectl; `make testbin`
// builds them and prints that folder.
const assetsEnvVar = "KUBEBUILDER_ASSETS"

// ErrAssetsMissing is returned by Start when the test binaries cannot be found.
var ErrAssetsMissing = errors.New("control-plane binaries not found")

// assets are the binaries a control plane runs.
type assets struct {
	dir, etcd, apiserver, kubectl string
}

// findAssets resolves the binaries in dir, or in $KUBEBUILDER_ASSETS when dir is empty.
func findAssets(dir string) (assets, error) {
	source := "the assets directory option"
	if dir == "" {
		dir = os.Getenv(assetsEnvVar)
		source = assetsEnvVar
	}
	if dir == "" {
		return assets{}, fmt.Errorf("%w: %s is not set; run `make testbin` and export %s=<the folder it prints>",
			ErrAssetsMissing, assetsEnvVar, assetsEnvVar)
	}
	a := assets{
		dir:       dir,
		etcd:      filepath.Join(dir, "etcd"),
		apiserver: filepath.Join(dir, "kube-apiserver"),
		kubectl:   filepath.Join(dir, "kubectl"),
	}
	var missing []string
	for _, bin := range []string{a.etcd, a.apiserver, a.kubectl} {
		if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, filepath.Base(bin))
		}
	}
	if len(missing) > 0 {
		return assets{}, fmt.Errorf("%w: %v missing from %s (from %s); run `make testbin` and export %s=<the folder it prints>",
			ErrAssetsMissing, missing, dir, source, assetsEnvVar)
	}
	return a, nil
}

package chartsource

import (
	"fmt"
	"io/fs"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kruise-addon/kruise-addon/charts"
)

// Load returns the override chart when path is set (a directory or a .tgz), else the embedded one.
func Load(path string) (*chart.Chart, error) {
	if path != "" {
		c, err := loader.Load(path)
		if err != nil {
			return nil, fmt.Errorf("load chart %s: %w", path, err)
		}
		return c, nil
	}
	fsys, err := charts.Kruise()
	if err != nil {
		return nil, err
	}
	return FromFS(fsys)
}

// FromFS loads a chart whose Chart.yaml is at the root of fsys.
func FromFS(fsys fs.FS) (*chart.Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: p, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded chart: %w", err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load embedded chart: %w", err)
	}
	return c, nil
}

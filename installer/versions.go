package installer

import (
	"github.com/kruise-addon/kruise-addon/versions"
)

// VersionsResult is the compatibility table, filtered for a cluster when one is given.
type VersionsResult struct {
	Current string         `json:"current"`
	Cluster string         `json:"cluster,omitempty"`
	Rows    []versions.Row `json:"rows"`
}

// Versions returns the table's rows, only those supporting cluster when it is set.
func Versions(cluster string) (VersionsResult, error) {
	t, err := versions.Load()
	if err != nil {
		return VersionsResult{}, err
	}
	res := VersionsResult{Current: t.CurrentRow().Addon}
	if cluster == "" {
		res.Rows = t.Rows()
		return res, nil
	}
	cv, err := versions.ParseClusterVersion(cluster)
	if err != nil {
		return res, &InvalidError{Err: err}
	}
	res.Cluster = cv.String()
	res.Rows = t.ForCluster(cv)
	return res, nil
}

// ServerVersion returns the cluster's version string.
func (i *Installer) ServerVersion() (string, error) {
	v, err := i.kube.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

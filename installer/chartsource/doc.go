// Package chartsource loads the chart the installer applies: the one embedded in the binary, or an
// override given as a chart directory or a .tgz. It must not import the cluster-facing packages
// (`k8s.io/client-go/...`, `sigs.k8s.io/controller-runtime/...`, `helm.sh/helm/v3/pkg/action`).
package chartsource

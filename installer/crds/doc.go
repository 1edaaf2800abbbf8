// Package crds owns what the installer does to the add-on's CustomResourceDefinitions (which
// they are comes from apis/kinds): adopt the ones that exist without a live owner into the
// release before Helm runs, apply the chart's server-side before an upgrade, and delete them on
// an uninstall that asks for it. It must not import `installer` (the root that calls it),
// `installer/release` or the Helm action package (`helm.sh/helm/v3/pkg/action`).
package crds

// Package bundle owns the air-gap bundle: one deterministic tar archive holding the packaged
// chart, the images the chart references (manager, daemon, the uninstall hook and, when asked,
// the console API's) as an OCI image layout, a manifest naming every image by repository and
// digest with the chart's version and digest and the layout index's digest, and optionally a
// signature of that manifest (sigstore's pkg/signature, PEM keys). It creates bundles, pushes their images (and the chart, as a Helm OCI artifact) to a
// private registry, writes a static Helm repository (the packaged chart and index.yaml), checks
// that a registry holds every image of a bundle, and turns a bundle and a registry into the
// chart values that point every image at that registry by digest, written into the chart's own
// values.yaml for plain helm (a chart without a bundle gets the registry alone). Reading a bundle bounds every
// entry by its kind from its header before reading it, refuses entries a bundle does not hold,
// checks each blob's digest while it streams by, and then verifies the layout against the
// manifest down to every layer (verify.go), so that nothing is pushed or installed from a
// bundle that is not what it records. Lacks names the images chosen values run that a bundle
// does not hold.
//
// It talks to registries with go-containerregistry only and reads charts with Helm's loader; it
// must not import the installer package (`installer`), `controllers/...` or `daemon/...` (the
// installer imports it).
package bundle

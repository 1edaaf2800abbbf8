// Package envhash owns the hash of the env vars a container reads from its pod's labels and
// annotations (fieldRef metadata.labels['k'] and metadata.annotations['k']). kruise-daemon
// records it per runtime container in apps.kruise.io/runtime-containers-meta
// (hashes.extractedEnvFromMetadataHash), computed from the env the container really runs with;
// the manager's in-place machinery computes it from the pod's current metadata and counts an
// env-from-metadata update as done only when both agree. Both sides must hash the same way, so
// the hash lives here once, beside the annotation keys of that contract in apis/apps/pub. It
// imports only the Kubernetes API types; it must not import any other package of the add-on
// (`...`).
package envhash

// Package ephemeraljob serves the EphemeralJob validating webhook at 1.8's path
// /validate-apps-kruise-io-v1alpha1-ephemeraljob. The CRD keeps the ephemeral containers
// schemaless, so this webhook checks them as the apiserver checks a pod's ephemeral containers
// (1.8's rules): unique DNS-1123 names, an image, known pull and termination message policies,
// valid environment variable names, no subPath mounts, and none of the fields an ephemeral
// container may not set (ports, resources, probes, lifecycle). It also refuses a missing or
// malformed selector and negative counts, which 1.8 leaves to the controller.
//
// The pull and termination message policies may be left out: the apiserver defaults them when
// the controller adds the containers to a pod.
//
// It imports apis/, controllers/setup, the admission kit (controllers/webhook/admit) and the
// fieldrule leaf; it must not import the manager, other webhook packages or any controller
// (`controllers/...` other than `controllers/setup`, `controllers/webhook/admit`,
// `controllers/webhook/fieldrule` and the deletion guard the kit holds,
// `controllers/webhook/deletionprotection`).
package ephemeraljob

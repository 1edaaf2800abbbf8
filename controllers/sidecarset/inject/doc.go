// Package inject owns SidecarSet injection into pods being created: which SidecarSets select a
// pod, which revision of each a pod gets, and what goes where (containers, init containers,
// volumes, env, imagePullSecrets, pod annotations). Inject, Matches and ChooseRevision are pure
// functions; Step is the /mutate-pod step that reads the SidecarSets that can match the pod's
// namespace through a cache index (NamespaceIndex), never every SidecarSet, and calls them. It
// also owns the revision hashes and the pod's kruise.io/sidecarset-* annotations, which the
// SidecarSet controller and webhook read through it.
//
// It imports apis/, controllers/setup, controllers/internal/revision and
// controllers/internal/podadmission (for the Step type); it must not import the manager, the
// SidecarSet controller or other kinds' packages (`controllers/...` other than
// `controllers/setup` and `controllers/internal/...`).
package inject

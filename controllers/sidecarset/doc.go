// Package sidecarset holds the SidecarSet controller. For each SidecarSet it records the
// current sidecars as a ControllerRevision (in the manager's namespace, since a SidecarSet has
// none), moves the sidecars of the pods it was injected into to the latest images in place as
// the update strategy allows (planUpdate, a pure planner), marks pods whose sidecars differ by
// more than images in their SidecarSetUpgradable condition, and writes the status. It reads a
// SidecarSet's pods through a pod cache index by kruise.io/sidecarset-injected-list, never by
// listing every pod.
//
// Injection into new pods is the inject subpackage's. This package imports apis/,
// controllers/setup, controllers/internal/{inplaceupdate,podcondition,podsort,revision} and
// controllers/sidecarset/inject; it must not import the manager or other kinds' packages
// (`controllers/...` other than `controllers/setup`, `controllers/internal/...` and
// `controllers/sidecarset/...`).
package sidecarset

// Package sidecarset holds the SidecarSet controller. For each SidecarSet it records the
// current sidecars as a ControllerRevision (in the manager's namespace, since a SidecarSet has
// none), moves the sidecars of the pods it was injected into to the latest images in place as
// the update strategy allows (planUpdate, a pure planner), and writes the status. As in 1.8, a
// pod's SidecarSetUpgradable condition gets this SidecarSet's entry true only right after its
// sidecars were updated in place, and false when they differ by more than images while the
// SidecarSet is rolling; a pod already on the latest sidecars gets no status write. The
// condition is written as a patch of that one condition without a resourceVersion, so the
// kubelet's status writes cost no conflict; the marks of one pod are serialised in the process
// and start from the newest condition known, the caller's copy or the one last written (Marks),
// so no SidecarSet's entry is lost. It reads a
// SidecarSet's pods through a pod cache index by kruise.io/sidecarset-injected-list, never by
// listing every pod.
//
// Injection into new pods is the inject subpackage's. This package imports apis/,
// controllers/setup, controllers/internal/{expectations,inplaceupdate,podcondition,podsort,revision} and
// controllers/sidecarset/inject; it must not import the manager or other kinds' packages
// (`controllers/...` other than `controllers/setup`, `controllers/internal/...` and
// `controllers/sidecarset/...`).
package sidecarset

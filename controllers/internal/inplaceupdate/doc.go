// Package inplaceupdate is the in-place update machinery the workloads share, behind four
// questions: can this change go in place (Plan), which way do the pods of an old revision go
// under the workload's policy, in place, by recreation or stuck (DecideRoute), do it
// (Updater.Update), and is it finished (Updater.Refresh).
//
// An update in place first sets the pod's InPlaceUpdateReady condition False, so that Services
// stop sending it traffic, then writes the new revision label, the metadata and the images, and
// records the containers' image IDs in the apps.kruise.io/inplace-update-state annotation. With a
// grace period, the images wait in apps.kruise.io/inplace-update-grace until it has passed. The
// update is finished when every updated container reports a new image ID; the condition then goes
// back to True. An update that changes labels or annotations a container reads through env
// (updateEnvFromMetadata) is finished only when kruise-daemon's apps.kruise.io/runtime-containers-meta
// shows, for each container's current ID, the env hash (apis/apps/pub/envhash) the pod's metadata gives:
// the daemon restarts such containers, and without it the update does not finish.
//
// The package must not import any controller package (`controllers/...` other than
// `controllers/internal/...`) or know any workload kind.
package inplaceupdate

// Package inplaceupdate is the in-place update machinery the workloads share, behind four
// questions: can this change go in place (Plan), which way do the pods of an old revision go
// under the workload's policy, in place, by recreation or stuck (DecideRoute), do it
// (Updater.Update), and is it finished (Updater.Refresh).
//
// An update in place first sets the pod's InPlaceUpdateReady condition False, so that Services
// stop sending it traffic, then writes the new revision label, the metadata and the images, and
// records the containers' image IDs in the apps.kruise.io/inplace-update-state annotation. With a
// grace period, the images wait in apps.kruise.io/inplace-update-grace until it has passed. When
// the pod's containers have a launch priority (the barrier env the pod webhook gives them), the
// containers change in batches, highest priority first (planBatch): the state records what waits
// (nextContainerImages, nextContainerRefMetadata), the containers that must be ready before the
// next batch (preCheckBeforeNext) and each batch written (containerBatchesRecord), and Refresh
// writes the next batch once the last one's containers run their new image and are ready. The
// update is finished when no batch waits and every updated container reports a new image ID; the
// condition then goes back to True. An update that changes labels or annotations a container reads through env
// (updateEnvFromMetadata) is finished only when kruise-daemon's apps.kruise.io/runtime-containers-meta
// shows, for each container's current ID, the env hash (apis/apps/pub/envhash) the pod's metadata gives:
// the daemon restarts such containers, and without it the update does not finish.
//
// With Options.VerticalScaling (the InPlaceWorkloadVerticalScaling gate) a change of containers'
// cpu and memory requests and limits goes in place as well, unless it adds or removes one or
// changes the pod's QoS class. The new values go through the pod's resize subresource, before the
// patch that records the update, and the update is finished only once the kubelet reports them in
// status.containerStatuses[].resources; a resize alone that restarts no container (resizePolicy)
// leaves InPlaceUpdateReady True.
//
// The package must not import any controller package (`controllers/...` other than
// `controllers/internal/...`) or know any workload kind.
package inplaceupdate

// Package containerrecreaterequest owns the manager side of ContainerRecreateRequest: it holds
// the pod not-ready through the KruisePodReady condition while unreadyGracePeriodSeconds asks
// for it, and releases it afterwards; keeps the sync-container-statuses annotation while the
// request is Recreating; completes the request when the daemon's per-container states are all
// final (after minStartedSeconds), when the pod is gone, when the daemon never answered, or
// when activeDeadlineSeconds passes; drops the active label on completion; and deletes the
// request ttlSecondsAfterFinished later. The container stops themselves are kruise-daemon's.
//
// It imports apis/, features, controllers/setup and controllers/internal/podcondition (the
// KruisePodReady hold); it must not import the manager, webhooks or other controllers
// (`controllers/...` other than `controllers/setup` and `controllers/internal/...`).
package containerrecreaterequest

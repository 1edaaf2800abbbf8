// Package imagelistpulljob owns the ImageListPullJob controller: one child ImagePullJob per
// image in spec.images, each with the job's template and the job as controller owner. A child
// whose image left the list, or whose template no longer matches, is deleted (and recreated
// from the new template). The status counts the children: active, completed, succeeded, and
// the failed images. A finished job is deleted after ttlSecondsAfterFinished.
//
// It imports apis/, controllers/internal and controllers/setup; it must not import the
// manager, webhooks or other controllers (`controllers/...` other than `controllers/internal/...`
// and `controllers/setup`): it never touches NodeImages, the children do.
package imagelistpulljob

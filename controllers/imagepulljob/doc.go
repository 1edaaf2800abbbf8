// Package imagepulljob owns the ImagePullJob controller. A reconcile picks the job's NodeImages
// (by spec.selector names or labels, or by the nodes of the pods spec.podSelector matches),
// copies the job's pull secrets into the daemon config namespace (the manager's
// --daemon-config-namespace, kruise-daemon-config by default), computes the status from what
// the daemons wrote into NodeImage status, and writes the image's tag, owned by the job, into as
// many more NodeImage specs as spec.parallelism leaves room for. A finished job releases its
// secret copies and is deleted after ttlSecondsAfterFinished. An unfinished job with pull secrets
// is looked at again every SecretRecheck, so a changed Secret reaches its copy within seconds
// without the manager listing or watching Secrets.
//
// It imports apis/, controllers/internal and controllers/setup; it must not import the
// manager, webhooks or other controllers (`controllers/...` other than `controllers/internal/...`
// and `controllers/setup`). Other controllers (ImageListPullJob) only create
// ImagePullJobs and read their status.
package imagepulljob

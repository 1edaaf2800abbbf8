// Package nodeimage serves the NodeImage admission webhooks at 1.8's paths,
// /mutate-apps-kruise-io-v1alpha1-nodeimage and /validate-apps-kruise-io-v1alpha1-nodeimage.
//
// Defaulting stamps each tag's createdAt with the time of admission, fills its pull policy's
// timeout (600 s) and back-off limit (3), and sorts the tags of every image by name, in the spec
// and in the status. Validation refuses NodeImages while KruiseDaemon is off (403) and, naming
// the field, more than 256 images, an empty image name, an empty or repeated tag, a tag without
// createdAt or pullPolicy.ttlSecondsAfterFinished, and a negative version.
//
// It imports apis/, controllers/setup, the admission kit and features; it must not import the
// controller (`controllers/nodeimage`): the webhook checks the object as sent, the controller acts
// on it.
package nodeimage

// Package podtemplate checks the pod template of a run-to-completion job, for the webhooks of
// kinds that hold one (a BroadcastJob's template, an AdvancedCronJob's jobTemplate and
// broadcastJobTemplate): valid labels, a restartPolicy a finished pod keeps (Never or
// OnFailure), at least one container, and containers with unique DNS-1123 names and an image.
// It is a leaf: it imports only k8s.io/api and k8s.io/apimachinery.
package podtemplate

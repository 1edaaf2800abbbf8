// Package podtemplate checks what the kinds' webhooks ask alike of the pods a workload makes:
// Validate over a kind's Rules (valid labels, the restartPolicy values it allows, at least one
// container, containers with unique DNS-1123 names, and, as the kind asks, no
// activeDeadlineSeconds, volumes every mount names, an image in every container), ValidateJob for
// a run-to-completion job's template (a BroadcastJob's, an AdvancedCronJob's jobTemplate and
// broadcastJobTemplate), ValidateSelector for a workload's spec.selector against its template's
// labels in the kind's own words, and ValidateLifecycle / ValidateHook for the lifecycle hooks'
// labels and finalizers. Each is called with the kind's field path. It is a leaf: it imports
// only k8s.io/api, k8s.io/apimachinery and apis/apps/pub.
package podtemplate

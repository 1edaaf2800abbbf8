// Package podtemplate checks the pod templates and selectors the kinds' webhooks share: Validate
// over a kind's Rules (valid labels, the restartPolicy values it allows, at least one container,
// containers with unique DNS-1123 names, and, as the kind asks, no activeDeadlineSeconds, volumes
// every mount names, an image in every container), ValidateJob for a run-to-completion job's
// template (a BroadcastJob's, an AdvancedCronJob's jobTemplate and broadcastJobTemplate), and
// ValidateSelector for a workload's spec.selector against its template's labels, in the kind's
// own words. It is a leaf: it imports only k8s.io/api and k8s.io/apimachinery.
package podtemplate

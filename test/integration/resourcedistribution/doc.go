// Package resourcedistribution proves ResourceDistribution against the real apiserver: the
// controller and the webhook wired as components.go wires them, run by an in-process manager.
// The copies reach the namespaces chosen by each kind of target, follow new namespaces, label
// changes and changes to the resource, leave the namespaces no longer targeted, and never
// overwrite an object they do not own; with ResourceDistributionGate off nothing acts.
package resourcedistribution

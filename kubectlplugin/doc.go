// Package kubectlplugin is the kubectl plugin kubectl-kruise: rollout status, history, undo,
// pause, resume and restart, scale, set image and describe for the add-on's CloneSet,
// Advanced StatefulSet and Advanced DaemonSet, worded as kubectl words them for Deployments.
//
// It owns the commands (NewCommand) and, per kind, the small adapter that reads and writes the
// fields they need (kinds.go). Rollout progress is a pure function of the object (status.go),
// tested as a table. The package talks to the cluster only through a controller-runtime client
// built from the kubectl flags; it must not import the controllers (`controllers/...`).
package kubectlplugin

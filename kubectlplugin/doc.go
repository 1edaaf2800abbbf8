// Package kubectlplugin is the kubectl plugin kubectl-kruise. For the add-on's CloneSet,
// Advanced StatefulSet and Advanced DaemonSet it has rollout status, history, undo, pause, resume
// and restart, scale, scaledown, set image and describe of its own, worded as kubectl words them
// for Deployments; create job --from=acj/NAME, create broadcastjob, create
// containerrecreaterequest and migrate (Deployment to CloneSet). set env, resources,
// serviceaccount, selector and subject, expose, exec and the other forms of create job are
// kubectl's own commands: kubectl's per-kind hooks are taught the add-on's kinds once
// (teachKubectl), and on those kinds kubectl only computes the new template, which the plugin
// writes as a merge patch. Built-in Deployments, StatefulSets and DaemonSets go to kubectl's
// commands unchanged (native.go).
//
// It owns the commands (NewCommand) and, per kind, the small adapter that reads and writes the
// fields they need (kinds.go). Rollout progress, scaledown and each step of a migration are pure
// functions, tested as tables. The package talks to the cluster through a controller-runtime
// client and kubectl's factory, both built from the kubectl flags; it must not import the
// controllers (`controllers/...`).
package kubectlplugin

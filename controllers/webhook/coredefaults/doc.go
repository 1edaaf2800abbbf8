// Package coredefaults sets the core/v1 defaults the apiserver gives a pod's containers and
// volumes, for webhooks that store containers or pod templates inside their own kinds (a
// CloneSet's template, a SidecarSet's sidecars): with the defaults in place, a revision hash
// computed from them matches what pods run. It is a leaf: it imports only k8s.io/api and
// k8s.io/utils.
package coredefaults

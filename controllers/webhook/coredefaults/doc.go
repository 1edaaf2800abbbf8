// Package coredefaults sets the core/v1 defaults the apiserver gives a pod spec, its containers and
// volumes, and a volume claim, for webhooks that store pod or claim templates or containers inside
// their own kinds (the template of a CloneSet, Advanced StatefulSet or BroadcastJob, a SidecarSet's
// sidecars): with the defaults in place, a revision hash computed from them matches what pods run.
// It is a leaf: it imports only k8s.io/api and k8s.io/utils.
package coredefaults

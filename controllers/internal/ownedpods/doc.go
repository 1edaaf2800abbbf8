// Package ownedpods is the part of a workload controller that deals with the pods it controls and
// is the same for every workload kind: the listing of the pods a workload controls (from one pod
// index by controller UID, ControllerIndex, that every kind shares), the pod event
// handler that maps a pod to its controlling workload by controller reference and tells the
// expectations what the cache has seen, the reconcile prologue that waits for those
// expectations, and the bounded parallel writes of a reconcile (the status write is the kit's,
// controllers/internal/kit). It must not import any controller package (`controllers/...` other
// than `controllers/internal/...`).
package ownedpods

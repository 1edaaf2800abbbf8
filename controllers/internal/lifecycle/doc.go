// Package lifecycle reads and moves a pod's lifecycle state (the lifecycle.apps.kruise.io/state
// label) and tells whether a lifecycle hook holds a pod: a hook holds a pod while the pod carries
// one of the hook's labels or finalizers, which the user's operator removes when it is done. It
// must not import any controller package.
package lifecycle

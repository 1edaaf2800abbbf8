// Package containerrecreate is the node half of ContainerRecreateRequest: for the CRRs of pods on
// its node it runs each container's preStop hook (CRI ExecSync or HTTP GET), stops the container
// through CRI with the grace period so that the kubelet starts it again, follows orderedRecreate,
// and records per-container state and completion in CRR status as 1.8 does. A stopped container
// of a pod the kubelet does not restart (the SidecarTerminator's requests for a finished job
// pod's sidecars) stays Recreating, as in 1.8; once the pod's phase is final such a request is no
// longer polled. It must not import `controllers/...` or daemon packages (`daemon/...`) other
// than `daemon/cri`.
package containerrecreate

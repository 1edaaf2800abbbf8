// Package containerrecreate is the node half of ContainerRecreateRequest: for the CRRs of pods on
// its node it runs each container's preStop hook (CRI ExecSync or HTTP GET), stops the container
// through CRI with the grace period so that the kubelet starts it again, follows orderedRecreate,
// and records per-container state and completion in CRR status as 1.8 does. It must not import
// `controllers/...` or daemon packages (`daemon/...`) other than `daemon/cri`.
package containerrecreate

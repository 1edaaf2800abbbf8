package imagepuller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// The events a finished pull leaves, with 1.8's reasons and source component.
const (
	// EventSource is the component named as the events' source (the node is their host).
	EventSource = "kruise-daemon-imagepuller"
	// ReasonPullSucceeded is on the NodeImage when a tag is on the node, pulled or found present.
	ReasonPullSucceeded = "PullImageSucceed"
	// ReasonPullFailed is on the NodeImage and on every object that asked for the tag (its
	// ImagePullJobs) when the tag failed.
	ReasonPullFailed = "PullImageFailed"
)

// nodeImageRef is the reference events on the node's NodeImage carry.
func nodeImageRef(name string, uid types.UID) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "NodeImage", Name: name, UID: uid}
}

// recordPull leaves the events of one finished pull: Normal on the NodeImage after a success;
// Warning on the tag's owners and on the NodeImage after a failure. Without a recorder it does
// nothing.
func (p *Puller) recordPull(ref string, t *task, elapsed time.Duration, err error) {
	rec := p.opts.Recorder
	if rec == nil {
		return
	}
	p.mu.Lock()
	node := p.nodeRef
	p.mu.Unlock()
	if node == nil {
		node = nodeImageRef(p.opts.NodeName, "")
	}
	if err == nil {
		rec.Eventf(node, corev1.EventTypeNormal, ReasonPullSucceeded, "Image %s ready on node %s after %s", ref, p.opts.NodeName, elapsed.Round(time.Millisecond))
		return
	}
	for i := range t.spec.OwnerReferences {
		rec.Eventf(&t.spec.OwnerReferences[i], corev1.EventTypeWarning, ReasonPullFailed, "Image %s could not be pulled on node %s: %v", ref, p.opts.NodeName, err)
	}
	rec.Eventf(node, corev1.EventTypeWarning, ReasonPullFailed, "Image %s could not be pulled on node %s: %v", ref, p.opts.NodeName, err)
}

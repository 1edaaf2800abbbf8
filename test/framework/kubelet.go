package framework

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// defaultGracePeriod applies when a deleted pod carries no grace period of its own.
const defaultGracePeriod = 30 * time.Second

// cachedPod is the pod of a work queue key in the informer cache: nil, with no error, when the
// key is malformed or the pod is gone.
func (s *NodeSimulator) cachedPod(key string) (*corev1.Pod, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, nil
	}
	pod, err := s.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return pod, err
}

// syncPod does for one pod on a simulated node what a kubelet's pod worker does: report its
// status, or, once it is deleted and its grace period is over, remove it.
func (s *NodeSimulator) syncPod(ctx context.Context, key string) error {
	pod, err := s.cachedPod(key)
	if err != nil || pod == nil {
		if err == nil {
			s.forget(key)
		}
		return err
	}
	node, owned := s.ownedNode(pod.Spec.NodeName)
	if !owned {
		return nil
	}
	if !s.nodeReady(pod.Spec.NodeName) {
		return nil // a dark node reports nothing; onNode resyncs when it comes back
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "node", pod.Spec.NodeName))
	tl := s.timeline(key, pod)
	if pod.DeletionTimestamp != nil {
		return s.syncDeletion(ctx, key, pod, node, tl)
	}

	podIP := pod.Status.PodIP
	if podIP != "" && !pod.Spec.HostNetwork {
		s.ips.claim(pod.UID, podIP)
	} else if podIP == "" {
		podIP = s.ips.get(pod.UID)
	}
	out := nextStatus(statusInput{
		pod:      pod,
		now:      s.clock.Now(),
		hostIP:   node.hostIP,
		podIP:    podIP,
		runtime:  node.runtime,
		timing:   s.timing,
		timeline: tl,
	})
	// Set before the write: a test that sees the write and then steps a fake clock must find
	// the timer already there.
	if out.requeueAfter > 0 {
		s.requeueAfter(key, out.requeueAfter)
	}
	if err := s.writeStatus(ctx, pod, out.status); err != nil {
		return err
	}
	s.keepTimeline(key, out.timeline)
	return nil
}

// syncDeletion removes a deleted pod the way a kubelet does: its containers stop at the end of
// the grace period (or sooner, with WithTerminationDelay), the pod reports a terminal status,
// and it is deleted with grace period 0. Finalizers keep it until their owners remove them.
func (s *NodeSimulator) syncDeletion(ctx context.Context, key string, pod *corev1.Pod, node simNode, tl podTimeline) error {
	now := s.clock.Now()
	if tl.deletionSeenAt.IsZero() {
		tl.deletionSeenAt = now
		s.keepTimeline(key, tl)
	}
	exit := defaultGracePeriod
	if pod.DeletionGracePeriodSeconds != nil {
		exit = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	if d := s.timing.termination; d >= 0 && d < exit {
		exit = d
	}
	if due := tl.deletionSeenAt.Add(exit); now.Before(due) {
		s.requeueAfter(key, due.Sub(now))
		return nil
	}
	if !isTerminal(pod.Status.Phase) {
		st := pod.Status.DeepCopy()
		terminalStatus(st, pod, node.runtime, corev1.PodSucceeded, now)
		if err := s.writeStatus(ctx, pod, *st); err != nil {
			return err
		}
	}
	if pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 {
		return nil // already deleted with grace 0; finalizers hold it
	}
	err := s.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod: %w", err)
	}
	klog.FromContext(ctx).V(3).Info("pod removed")
	return nil
}

// writeStatus writes status when it differs from the pod's. The write carries the cached
// resourceVersion, so a status computed from a stale cache fails with a conflict and is
// recomputed, rather than overwriting conditions other controllers set.
func (s *NodeSimulator) writeStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error {
	if equality.Semantic.DeepEqual(pod.Status, status) {
		return nil
	}
	p := pod.DeepCopy()
	p.Status = status
	if _, err := s.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update pod status: %w", err)
	}
	klog.FromContext(ctx).V(4).Info("pod status written", "phase", status.Phase)
	return nil
}

func (s *NodeSimulator) nodeReady(name string) bool {
	node, err := s.nodeLister.Get(name)
	if err != nil {
		return false
	}
	return nodeIsReady(&node.Status)
}

// timeline returns what the simulator remembers of this pod; a pod recreated under the same
// name starts afresh.
func (s *NodeSimulator) timeline(key string, pod *corev1.Pod) podTimeline {
	s.mu.Lock()
	defer s.mu.Unlock()
	tl, ok := s.timelines[key]
	if !ok || tl.uid != pod.UID {
		return podTimeline{uid: pod.UID}
	}
	return tl.clone()
}

// keepTimeline stores a timeline once what it describes has been written.
func (s *NodeSimulator) keepTimeline(key string, tl podTimeline) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timelines[key] = tl
}

func (s *NodeSimulator) forget(key string) {
	s.cancelTimer(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.timelines, key)
}

// ReportResources writes into a pod's container statuses the requests and limits its spec asks
// for, as a kubelet does once it has resized the containers in place: a test that plays the
// kubelet for a resize passes it to ChangeStatus. The simulator reports only the resources a
// container started with, so until a test calls this a resize stays unfinished.
func ReportResources(p *corev1.Pod) {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		for _, c := range p.Spec.Containers {
			if c.Name == cs.Name {
				cs.Resources = c.Resources.DeepCopy()
			}
		}
	}
}

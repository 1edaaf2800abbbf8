package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// defaultSchedulerName is the scheduler a pod without spec.schedulerName gets.
const defaultSchedulerName = corev1.DefaultSchedulerName

// wantsToSchedule reports whether the scheduler should place this unbound pod.
func (s *NodeSimulator) wantsToSchedule(pod *corev1.Pod) bool {
	if !s.schedule || pod.DeletionTimestamp != nil || isTerminal(pod.Status.Phase) {
		return false
	}
	if pod.Spec.SchedulerName != "" && pod.Spec.SchedulerName != defaultSchedulerName {
		return false
	}
	return s.namespaces == nil || s.namespaces[pod.Namespace]
}

// schedulePod binds one pod, like kube-scheduler, to the simulated node that fits it and has
// the fewest pods (ties go to the first name). A node fits when it is Ready and schedulable,
// matches the nodeSelector and required node affinity, has room under its pods allocatable,
// and carries no NoSchedule or NoExecute taint the pod does not tolerate. Resource requests,
// pod affinity and topology spread are not considered.
//
// As in kube-scheduler, deciding is serial and binding is not: the node is picked and the pod
// assumed on it under schedMu, and the binding is written after the lock is released, so the
// next pod's decision, which counts the assumed pod, does not wait for this pod's write.
func (s *NodeSimulator) schedulePod(ctx context.Context, key string) error {
	pod, err := s.cachedPod(key)
	if err != nil || pod == nil {
		return err
	}
	if pod.Spec.NodeName != "" || !s.wantsToSchedule(pod) {
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	node, reasons, assumed := s.assume(ctx, pod)
	if !assumed {
		return nil // a binding of this pod is under way
	}
	if node == "" {
		logger.V(4).Info("no node fits", "reasons", reasons)
		return s.markUnschedulable(ctx, pod, reasons)
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := s.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		// The pod takes no place on the node: nothing will show it bound there.
		s.forgetAssumed(pod.UID)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // bound by someone else, or gone
		}
		return fmt.Errorf("bind to %s: %w", node, err)
	}
	logger.V(3).Info("pod bound", "node", node)
	return nil
}

// assume picks the node for pod and, when one fits, records the pod as bound to it until the
// cache shows the binding. It returns false when the pod is already assumed; otherwise the node,
// or "" with why each node was refused. One decision at a time, as kube-scheduler's single
// scheduling loop: two workers picking at once would both see the same counts and pile pods
// onto one node.
func (s *NodeSimulator) assume(ctx context.Context, pod *corev1.Pod) (string, map[string]string, bool) {
	s.schedMu.Lock()
	defer s.schedMu.Unlock()
	s.mu.Lock()
	_, bound := s.assumed[pod.UID]
	s.mu.Unlock()
	if bound {
		return "", nil, false
	}
	node, reasons := s.pickNode(ctx, pod)
	if node != "" {
		s.mu.Lock()
		s.assumed[pod.UID] = assumedPod{node: node, key: cache.MetaObjectToName(pod).String()}
		s.mu.Unlock()
	}
	return node, reasons, true
}

func (s *NodeSimulator) forgetAssumed(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.assumed, uid)
}

// pickNode returns the node for pod, or "" and why each node was refused.
func (s *NodeSimulator) pickNode(ctx context.Context, pod *corev1.Pod) (string, map[string]string) {
	logger := klog.FromContext(ctx)
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	refused := map[string]string{}
	best, bestCount := "", 0
	for _, name := range s.NodeNames() {
		node, err := s.nodeLister.Get(name)
		if err != nil {
			refused[name] = "not found"
			continue
		}
		if why := nodeRefuses(logger, node, pod, affinity); why != "" {
			refused[name] = why
			continue
		}
		count := s.podCount(name)
		if limit, ok := node.Status.Allocatable[corev1.ResourcePods]; ok && int64(count) >= limit.Value() {
			refused[name] = "too many pods"
			continue
		}
		if best == "" || count < bestCount {
			best, bestCount = name, count
		}
	}
	return best, refused
}

// nodeRefuses says why pod cannot go to node, or "" when it can.
func nodeRefuses(logger klog.Logger, node *corev1.Node, pod *corev1.Pod, affinity nodeaffinity.RequiredNodeAffinity) string {
	if !nodeIsReady(&node.Status) {
		return "not ready"
	}
	if node.Spec.Unschedulable {
		return "unschedulable"
	}
	if ok, err := affinity.Match(node); err != nil || !ok {
		return "didn't match Pod's node affinity/selector"
	}
	hard := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	if taint, found := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, hard, true); found {
		return fmt.Sprintf("had untolerated taint {%s: %s}", taint.Key, taint.Value)
	}
	return ""
}

// podCount is the number of pods on a node, counting assumed pods whose binding the cache does
// not show yet. It costs the assumed pods, not the node's pods: the index gives the count.
func (s *NodeSimulator) podCount(node string) int {
	keys, _ := s.podIndex.IndexKeys(podsByNode, node)
	n := len(keys)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.assumed {
		if a.node != node {
			continue
		}
		// The cache may already hold a binding whose event handler has not run yet.
		if obj, ok, _ := s.podIndex.GetByKey(a.key); ok {
			if p, isPod := obj.(*corev1.Pod); isPod && p.Spec.NodeName == node && !isTerminal(p.Status.Phase) {
				continue
			}
		}
		n++
	}
	return n
}

// markUnschedulable records, as kube-scheduler does, why the pod waits; it is retried when a
// simulated node changes.
func (s *NodeSimulator) markUnschedulable(ctx context.Context, pod *corev1.Pod, refused map[string]string) error {
	msg := unschedulableMessage(len(s.NodeNames()), refused)
	if c := findCondition(&pod.Status, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Message == msg {
		return nil
	}
	p := pod.DeepCopy()
	setCondition(&p.Status, corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable, msg, s.clock.Now())
	if _, err := s.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("mark unschedulable: %w", err)
	}
	return nil
}

// unschedulableMessage reads like kube-scheduler's: "0/3 nodes are available: 2 not ready, ...".
func unschedulableMessage(total int, refused map[string]string) string {
	counts := map[string]int{}
	for _, why := range refused {
		counts[why]++
	}
	parts := make([]string, 0, len(counts))
	for why, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available", total)
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	return msg + "."
}

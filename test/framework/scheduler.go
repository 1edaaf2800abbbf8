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
func (s *NodeSimulator) schedulePod(ctx context.Context, key string) error {
	pod, err := s.cachedPod(key)
	if err != nil || pod == nil {
		return err
	}
	if pod.Spec.NodeName != "" || !s.wantsToSchedule(pod) {
		return nil
	}
	s.mu.Lock()
	_, bound := s.assumed[pod.UID]
	s.mu.Unlock()
	if bound {
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))

	// One decision at a time, as kube-scheduler's single scheduling loop: two workers picking at
	// once would both see the same counts and pile pods onto one node.
	s.schedMu.Lock()
	defer s.schedMu.Unlock()
	node, reasons := s.pickNode(ctx, pod)
	if node == "" {
		logger.V(4).Info("no node fits", "reasons", reasons)
		return s.markUnschedulable(ctx, pod, reasons)
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := s.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // bound by someone else, or gone
		}
		return fmt.Errorf("bind to %s: %w", node, err)
	}
	s.mu.Lock()
	s.assumed[pod.UID] = node
	s.mu.Unlock()
	logger.V(3).Info("pod bound", "node", node)
	return nil
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

// podCount is the number of pods on a node, counting bindings the cache has not seen yet.
func (s *NodeSimulator) podCount(node string) int {
	pods, _ := s.podIndex.ByIndex(podsByNode, node)
	seen := make(map[types.UID]bool, len(pods))
	for _, obj := range pods {
		if p, ok := obj.(*corev1.Pod); ok {
			seen[p.UID] = true
		}
	}
	n := len(pods)
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, assumedNode := range s.assumed {
		// The cache may already hold a binding whose event handler has not run yet.
		if assumedNode == node && !seen[uid] {
			n++
		}
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

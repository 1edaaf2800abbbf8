package framework

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// What a node template leaves empty gets these, as the kubelet the tests target would report;
// they are the node builder's defaults, so both kinds of node look alike.
const (
	DefaultKubeletVersion = builder.DefaultKubeletVersion
	DefaultRuntime        = builder.DefaultRuntime
)

// AddNodes creates nodes the simulator owns from templates, typically built with
// builder.Node. What a template leaves empty is filled in like a kubelet would register:
// the kubernetes.io/hostname, os and arch labels, an InternalIP, kubelet version v1.37.2, a
// containerd runtime, 8 CPUs, 32Gi and 110 pods of capacity, and a Ready condition. A node
// that already exists is an error, since another simulator may own it. AddNodes returns once
// the simulator's own cache shows the nodes as written, so the next pod is scheduled against
// them.
func (s *NodeSimulator) AddNodes(ctx context.Context, nodes ...*corev1.Node) error {
	for _, tmpl := range nodes {
		s.mu.Lock()
		if _, ok := s.nodes[tmpl.Name]; ok {
			s.mu.Unlock()
			return fmt.Errorf("node %s: already simulated", tmpl.Name)
		}
		ip := nodeIP(s.nodeCount)
		s.nodeCount++
		node := completeNode(tmpl, ip, s.clock.Now())
		// Owned before it exists, so that the informer's first event for it already counts.
		s.nodes[node.Name] = simNode{hostIP: ip, runtime: runtimeName(node.Status.NodeInfo.ContainerRuntimeVersion)}
		s.mu.Unlock()

		if err := s.createNode(ctx, node); err != nil {
			s.mu.Lock()
			delete(s.nodes, node.Name)
			s.mu.Unlock()
			return err
		}
		if err := s.waitForCachedNode(ctx, node.Name); err != nil {
			return err
		}
		s.logger.V(2).Info("node added", "node", node.Name, "ip", ip)
	}
	return nil
}

func (s *NodeSimulator) createNode(ctx context.Context, node *corev1.Node) error {
	status := node.Status
	created, err := s.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create node %s: %w", node.Name, err)
	}
	// Create ignores most of the status, as for every kind with a status subresource. Other
	// controllers (kube-controller-manager's, if running) may write the new node first, so
	// the status write retries on a conflict with a fresh copy.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		created.Status = status
		_, err := s.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if fresh, getErr := s.cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); getErr == nil {
				created = fresh
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set status of node %s: %w", node.Name, err)
	}
	return s.syncNotReadyTaint(ctx, node.Name, nodeIsReady(&status))
}

// syncNotReadyTaint removes the node.kubernetes.io/not-ready:NoSchedule taint from a Ready
// node and adds it to one that is not. Admission puts it on every new node and the node
// lifecycle controller keeps it in step with the Ready condition; no such controller runs
// here, so we do.
func (s *NodeSimulator) syncNotReadyTaint(ctx context.Context, name string, ready bool) error {
	notReadyTaint := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := s.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		has := false
		for _, t := range node.Spec.Taints {
			if t.MatchTaint(&notReadyTaint) {
				has = true
				if ready {
					continue
				}
			}
			taints = append(taints, t)
		}
		switch {
		case ready && !has, !ready && has:
			return nil
		case !ready:
			taints = append(taints, notReadyTaint)
		}
		node.Spec.Taints = taints
		_, err = s.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("sync not-ready taint of node %s: %w", name, err)
	}
	return nil
}

// waitForCachedNode waits until the informer has the node as the apiserver has it now.
func (s *NodeSimulator) waitForCachedNode(ctx context.Context, name string) error {
	node, err := s.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	want, _ := strconv.ParseUint(node.ResourceVersion, 10, 64)
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, cacheSyncTimeout, true, func(context.Context) (bool, error) {
		cached, err := s.nodeLister.Get(name)
		if err != nil {
			return false, nil
		}
		// etcd resource versions grow; comparing them is fine for a cache of one apiserver.
		got, _ := strconv.ParseUint(cached.ResourceVersion, 10, 64)
		return got >= want, nil
	})
	if err != nil {
		return fmt.Errorf("wait for node %s in the cache: %w", name, err)
	}
	return nil
}

// cacheSyncTimeout bounds waits for the simulator's informers, which are local and fast.
const cacheSyncTimeout = 30 * time.Second

func nodeIsReady(st *corev1.NodeStatus) bool {
	c := findNodeCondition(st, corev1.NodeReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// completeNode fills in what a template leaves empty.
func completeNode(tmpl *corev1.Node, ip string, now time.Time) *corev1.Node {
	n := tmpl.DeepCopy()
	n.ResourceVersion = ""
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for k, v := range map[string]string{
		corev1.LabelHostname:   n.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	} {
		if _, ok := n.Labels[k]; !ok {
			n.Labels[k] = v
		}
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[AnnotationSimulatedNode] = "true"

	st := &n.Status
	if len(st.Addresses) == 0 {
		st.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: n.Name}}
	}
	info := &st.NodeInfo
	if info.KubeletVersion == "" {
		info.KubeletVersion = DefaultKubeletVersion
	}
	if info.ContainerRuntimeVersion == "" {
		info.ContainerRuntimeVersion = DefaultRuntime
	}
	if info.OperatingSystem == "" {
		info.OperatingSystem, info.Architecture = "linux", "amd64"
	}
	if st.Capacity == nil {
		st.Capacity = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("8"),
			corev1.ResourceMemory: resource.MustParse("32Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
	}
	if st.Allocatable == nil {
		st.Allocatable = st.Capacity.DeepCopy()
	}
	if findNodeCondition(st, corev1.NodeReady) == nil {
		st.Conditions = append(st.Conditions, readyCondition(corev1.ConditionTrue, now))
	}
	return n
}

// readyCondition is the Ready condition a kubelet posts.
func readyCondition(status corev1.ConditionStatus, now time.Time) corev1.NodeCondition {
	reason, msg := "KubeletReady", "kubelet is posting ready status"
	if status != corev1.ConditionTrue {
		reason, msg = "KubeletNotReady", "simulated node is not ready"
	}
	t := *metaTime(now)
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t}
}

func findNodeCondition(st *corev1.NodeStatus, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// SetNodeReady sets a simulated node's Ready condition and, as the node lifecycle controller
// would, the node.kubernetes.io/not-ready:NoSchedule taint. A node that is not Ready gets no
// new pods, and its kubelet stops: its pods keep their status and deleted ones stay, as when a
// real node goes dark.
func (s *NodeSimulator) SetNodeReady(ctx context.Context, name string, ready bool) error {
	if !s.owns(name) {
		return fmt.Errorf("node %s: not simulated here", name)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := s.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cond := readyCondition(status, s.clock.Now())
		if c := findNodeCondition(&node.Status, corev1.NodeReady); c != nil {
			if c.Status == status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			*c = cond
		} else {
			node.Status.Conditions = append(node.Status.Conditions, cond)
		}
		_, err = s.cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set node %s ready=%v: %w", name, ready, err)
	}
	return s.syncNotReadyTaint(ctx, name, ready)
}

// NodeNames returns the names of the nodes this simulator owns, sorted.
func (s *NodeSimulator) NodeNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.nodes))
	for n := range s.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DeleteNodes deletes the simulator's nodes; it owns none afterwards. Their pods stay, since no
// pod garbage collector runs here.
func (s *NodeSimulator) DeleteNodes(ctx context.Context) error {
	for _, name := range s.NodeNames() {
		if err := s.cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", name, err)
		}
		s.mu.Lock()
		delete(s.nodes, name)
		s.mu.Unlock()
	}
	return nil
}

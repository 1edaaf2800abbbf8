package daemonset

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
)

// scope is what one reconcile reads before it decides anything. Its nodes and pods are the
// informer cache's own objects, listed without a copy: nothing may change them, and a write
// goes through a copy (inplaceupdate, lifecycle and podcondition make one).
type scope struct {
	ds *appsv1alpha1.DaemonSet
	// nodes are every node, by name.
	nodes []*corev1.Node
	// pods are the DaemonSet's live pods by the node they are on or are pinned to; terminating
	// counts, per node, those on their way out.
	pods        map[string][]*corev1.Pod
	terminating map[string]int
	// Tracked is every revision, sorted; Update is the one of the current template. A
	// DaemonSet records no current revision, so Current is Update.
	revision.Tracked
}

// readScope reads the nodes, the DaemonSet's pods and its revisions, and creates the revision of
// the template if it is new.
func (r *Reconciler) readScope(ctx context.Context, ds *appsv1alpha1.DaemonSet) (*scope, error) {
	pods, _, err := ownedpods.List(ctx, r.Client, ds, ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	s := &scope{ds: ds, pods: map[string][]*corev1.Pod{}, terminating: map[string]int{}}

	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	for i := range nodes.Items {
		s.nodes = append(s.nodes, &nodes.Items[i])
	}
	slices.SortFunc(s.nodes, func(a, b *corev1.Node) int { return compareStrings(a.Name, b.Name) })

	for _, p := range pods {
		node := nodepin.TargetNode(p)
		if node == "" {
			continue // not a pod this controller made: it names no node
		}
		if p.DeletionTimestamp != nil {
			s.terminating[node]++
			continue
		}
		s.pods[node] = append(s.pods[node], p)
	}
	for _, ps := range s.pods {
		slices.SortFunc(ps, olderFirst)
	}

	// The revision of the current template is found or created.
	if s.Tracked, err = r.History.Track(ctx, revision.Workload{Parent: ds, GVK: controllerKind, Selector: ds.Spec.Selector.MatchLabels,
		Template: ds.Spec.Template, Labels: ds.Spec.Template.Labels}, ds.Status.CollisionCount); err != nil {
		return nil, err
	}
	return s, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hash is the value of the controller-revision-hash label of pods of the update revision, and the
// status's daemonSetHash.
func (s *scope) hash() string {
	if h := s.Update.Labels[revision.HashLabel]; h != "" {
		return h
	}
	return revision.ShortHash(s.Update.Name)
}

// isUpdated reports whether pod is at the update revision.
func (s *scope) isUpdated(pod *corev1.Pod) bool {
	return pod.Labels[appsv1.ControllerRevisionHashLabelKey] == s.hash()
}

// revisionOf returns the revision a pod was made from, or nil when it is no longer in history.
func (s *scope) revisionOf(pod *corev1.Pod) *appsv1.ControllerRevision {
	v := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	for _, h := range s.History {
		if v != "" && (v == h.Labels[revision.HashLabel] || v == h.Name) {
			return h
		}
	}
	return nil
}

// allPods lists every live pod of the scope.
func (s *scope) allPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, ps := range s.pods {
		out = append(out, ps...)
	}
	return out
}

package ownedpods

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControllerIndex indexes pods by the UID of the object that controls them (the owner reference
// with controller: true), whatever its kind. A workload reads its own pods from it instead of
// matching its selector against every pod of the namespace: at ten thousand pods in one namespace
// that scan, with the copy of each pod into the list, was most of the manager's CPU.
const ControllerIndex = "kruise.io/pod-controller-uid"

// controllerUID is the ControllerIndex value of a pod.
func controllerUID(obj client.Object) []string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.UID == "" {
		return nil
	}
	return []string{string(ref.UID)}
}

// Index registers ControllerIndex with the cache behind indexer. Every controller that lists
// pods by their controller calls it from its setup; registering it again is not an error.
func Index(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &corev1.Pod{}, ControllerIndex, controllerUID)
	if err != nil && !strings.Contains(err.Error(), "conflict") {
		return fmt.Errorf("index pods by their controller: %w", err)
	}
	return nil
}

// Controlled lists the pods of namespace ns that the object with uid controls, from a reader
// that has ControllerIndex (the manager's cache), terminating ones included. The pods are the
// cache's own objects, listed without a copy: read them only, and write a copy.
func Controlled(ctx context.Context, c client.Reader, ns string, uid types.UID) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingFields{ControllerIndex: string(uid)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list pods controlled by %s: %w", uid, err)
	}
	out := make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		out[i] = &pods.Items[i]
	}
	return out, nil
}

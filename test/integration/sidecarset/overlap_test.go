package sidecarset

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSidecarSetBoundToADeletedNamespaceDoesNotOverlap checks a SidecarSet bound to a namespace
// that no longer exists does not block another SidecarSet, selecting namespaces by label, from
// injecting a container of the same name: a namespace that cannot be read is not selected.
func TestSidecarSetBoundToADeletedNamespaceDoesNotOverlap(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, sidecarSetIn("bound-to-gone", ns+"-gone", corev1.Container{Name: "shared-agent", Image: "agent:1"}))
	bySelector := sidecarSetIn("by-selector", "", corev1.Container{Name: "shared-agent", Image: "agent:1"})
	bySelector.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}
	if err := env.Client.Create(context.Background(), bySelector); err != nil {
		t.Fatalf("a SidecarSet whose only clash is with one bound to a deleted namespace was refused: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), bySelector) })
}

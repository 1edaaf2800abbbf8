package sidecarset

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// What Marks remembers of a pod stays bounded: it is dropped once a copy that includes the
// write is marked from, when the pod is deleted, and to make room for another pod.
func TestMarksRememberTheLastWriteOnlyWhileNeeded(t *testing.T) {
	pod := func(uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID(uid)}}
	}
	tests := []struct {
		name string
		// after marks pod "a" once and does what follows.
		after        func(t *testing.T, m *Marks, written *corev1.Pod)
		wantRemember bool
	}{
		{
			name:         "a pod just marked is remembered",
			after:        func(*testing.T, *Marks, *corev1.Pod) {},
			wantRemember: true,
		},
		{
			name: "a pod marked again from a copy that includes the write is forgotten",
			after: func(t *testing.T, m *Marks, written *corev1.Pod) {
				if err := m.Mark(context.Background(), written, "agent", true); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "a deleted pod is forgotten",
			after: func(_ *testing.T, m *Marks, written *corev1.Pod) { m.Forget(written.UID) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := pod("a")
			c := fake.NewClientBuilder().WithObjects(a).WithStatusSubresource(a).Build()
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "a"}, a); err != nil {
				t.Fatal(err)
			}
			m := NewMarks(c, clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			if err := m.Mark(context.Background(), a, "agent", true); err != nil {
				t.Fatal(err)
			}
			written := pod("a")
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "a"}, written); err != nil {
				t.Fatal(err)
			}
			tt.after(t, m, written)
			_, got := m.written[a.UID]
			if got != tt.wantRemember {
				t.Fatalf("pod remembered: %v, want %v", got, tt.wantRemember)
			}
		})
	}
}

// However many pods are marked, Marks remembers no more than maxRemembered of them.
func TestMarksRememberNoMoreThanTheBound(t *testing.T) {
	m := NewMarks(fake.NewClientBuilder().Build(), clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	for i := range maxRemembered + 10 {
		m.remember(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprint("p", i)), ResourceVersion: "7"}}, corev1.PodCondition{})
	}
	if len(m.written) != maxRemembered {
		t.Fatalf("%d pods remembered, want the bound %d", len(m.written), maxRemembered)
	}
}

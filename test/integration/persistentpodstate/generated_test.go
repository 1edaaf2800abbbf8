package persistentpodstate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestGeneratedStateKeepsUserChangesUntilItsAnnotationsChange checks a generated
// PersistentPodState is written again only when one of the StatefulSet's three generating
// annotations changes: a user's persistentPodStateRetentionPolicy WhenDeleted survives a scale
// down, and so do the states of the pods scaled away.
func TestGeneratedStateKeepsUserChangesUntilItsAnnotationsChange(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pps-", nil)
	framework.Create(t, env.Client, generatingSet("kept", ns, 2))
	statesAre(t, ns, "kept", "both pods recorded", func(s map[string]appsv1alpha1.PodState) error {
		return framework.Want(len(s) == 2, fmt.Sprintf("states %v", s))
	})

	framework.Eventually(t, framework.Short, "the user keeps states of deleted pods only", func(ctx context.Context) error {
		pps := &appsv1alpha1.PersistentPodState{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept"}, pps); err != nil {
			return err
		}
		pps.Spec.PersistentPodStateRetentionPolicy = appsv1alpha1.PersistentPodStateRetentionPolicyWhenDeleted
		return env.Client.Update(ctx, pps)
	})
	framework.Eventually(t, framework.Short, "scaled to one", func(ctx context.Context) error {
		cur := &appsv1beta1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept"}, cur); err != nil {
			return err
		}
		cur.Spec.Replicas = ptr.To[int32](1)
		return env.Client.Update(ctx, cur)
	})
	framework.Eventually(t, framework.Medium, "the StatefulSet at one pod", func(ctx context.Context) error {
		cur := &appsv1beta1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept"}, cur); err != nil {
			return err
		}
		return framework.Want(cur.Status.Replicas == 1 && cur.Status.ObservedGeneration == cur.Generation, fmt.Sprintf("status %+v", cur.Status))
	})
	framework.Consistently(t, 3*time.Second, "the user's retention policy and kept-1's state stay", func(ctx context.Context) error {
		pps := &appsv1alpha1.PersistentPodState{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept"}, pps); err != nil {
			return err
		}
		_, kept := pps.Status.PodStates["kept-1"]
		return framework.Want(pps.Spec.PersistentPodStateRetentionPolicy == appsv1alpha1.PersistentPodStateRetentionPolicyWhenDeleted && kept,
			fmt.Sprintf("retention %q, states %v", pps.Spec.PersistentPodStateRetentionPolicy, pps.Status.PodStates))
	})
}

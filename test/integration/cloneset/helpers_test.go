package cloneset

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// Named timeouts for waits, beyond the test kit's.
const (
	// settle is how long a small CloneSet may take to reach its spec on the simulated nodes.
	settle = framework.Long
	// rollout is how long a 20-pod update may take.
	rollout = 3 * time.Minute
)

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "cs-", nil)
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	framework.Create(t, env.Client, obj)
}

// change gets the CloneSet, applies f and updates it, retrying on conflicts.
func change(t *testing.T, ns, name string, f func(*appsv1alpha1.CloneSet)) {
	t.Helper()
	framework.Change(t, env.Client, clientKey(ns, name), f)
}

func getCloneSet(t *testing.T, ns, name string) *appsv1alpha1.CloneSet {
	t.Helper()
	return framework.Get[appsv1alpha1.CloneSet](t, env.Client, clientKey(ns, name))
}

// waitSettled waits until the CloneSet's status says every one of its replicas is updated and
// ready and the controller has seen the latest spec.
func waitSettled(t *testing.T, ns, name string, replicas int32, timeout time.Duration) *appsv1alpha1.CloneSet {
	t.Helper()
	var cs *appsv1alpha1.CloneSet
	framework.Eventually(t, timeout, fmt.Sprintf("CloneSet %s settles at %d replicas", name, replicas), func(ctx context.Context) error {
		cs = &appsv1alpha1.CloneSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return err
		}
		st := cs.Status
		if st.ObservedGeneration != cs.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, cs.Generation)
		}
		if st.Replicas != replicas || st.ReadyReplicas != replicas || st.UpdatedReplicas != replicas || st.UpdatedReadyReplicas != replicas || st.AvailableReplicas != replicas {
			return fmt.Errorf("status %+v", st)
		}
		pods, err := framework.LivePods(ctx, env.Client, ns, name)
		if err != nil {
			return err
		}
		if len(pods) != int(replicas) {
			return fmt.Errorf("%d live pods", len(pods))
		}
		return nil
	})
	return cs
}

// sampler watches a CloneSet's pods while a rollout runs and keeps the worst it saw; read its
// figures once finish has returned.
type sampler struct {
	*framework.Sampler
	maxUnavailable int // replicas minus ready live pods
	maxTotal       int // live pods
	samples        int
}

// sample starts sampling the pods of app every 20ms until finish is called.
func sample(ns, app string, replicas int) *sampler {
	s := &sampler{}
	s.Sampler = framework.Sample(20*time.Millisecond, func() {
		pods, err := framework.LivePods(context.Background(), env.Client, ns, app)
		if err != nil {
			return
		}
		ready := 0
		for i := range pods {
			if framework.PodReady(&pods[i]) && framework.PodCondition(&pods[i], appspub.InPlaceUpdateReady) != corev1.ConditionFalse {
				ready++
			}
		}
		s.samples++
		s.maxUnavailable = max(s.maxUnavailable, replicas-ready)
		s.maxTotal = max(s.maxTotal, len(pods))
	})
	return s
}

func (s *sampler) finish() (maxUnavailable, maxTotal, samples int) {
	s.Stop()
	return s.maxUnavailable, s.maxTotal, s.samples
}

// withEnv is a change that sets the first container's env to name=value alone: a change that
// cannot go in place, so it recreates the pods.
func withEnv(name, value string) func(*appsv1alpha1.CloneSet) {
	return func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: name, Value: value}}
	}
}

// podRef is a pod object carrying only its key, for patches.
func podRef(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func clientKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

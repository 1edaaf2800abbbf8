package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// Named timeouts beyond the kit's.
const (
	// rollout bounds a rollout or a scale of a handful of pods, one at a time.
	rollout = 3 * time.Minute
)

const (
	imageV1 = "registry.example.com/db:1"
	imageV2 = "registry.example.com/db:2"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "asts-", nil)
}

// newSet is a v1beta1 StatefulSet named name of replicas pods at imageV1, changed by opts.
func newSet(name, ns string, replicas int32, opts ...func(*appsv1beta1.StatefulSet)) *appsv1beta1.StatefulSet {
	set := kinds.StatefulSet(name, ns).Replicas(replicas).Image(imageV1).Obj()
	for _, f := range opts {
		f(set)
	}
	return set
}

func parallel(s *appsv1beta1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }

func rolling(f func(*appsv1beta1.RollingUpdateStatefulSetStrategy)) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		if s.Spec.UpdateStrategy.RollingUpdate == nil {
			s.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.RollingUpdateStatefulSetStrategy{}
		}
		f(s.Spec.UpdateStrategy.RollingUpdate)
	}
}

// inPlace sets podUpdatePolicy with the InPlaceUpdateReady readiness gate the webhook asks for.
func inPlace(p appsv1beta1.PodUpdateStrategyType) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) { ru.PodUpdatePolicy = p })(s)
		s.Spec.Template.Spec.ReadinessGates = append(s.Spec.Template.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: appspub.InPlaceUpdateReady})
	}
}

func getSet(ctx context.Context, ns, name string) (*appsv1beta1.StatefulSet, error) {
	set := &appsv1beta1.StatefulSet{}
	return set, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, set)
}

// waitSet reads the StatefulSet until check accepts it, for at most timeout.
func waitSet(t *testing.T, ns, name string, timeout time.Duration, what string, check func(*appsv1beta1.StatefulSet) error) *appsv1beta1.StatefulSet {
	t.Helper()
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, timeout, what, check)
}

func mustGetSet(t *testing.T, ns, name string) *appsv1beta1.StatefulSet {
	t.Helper()
	set, err := getSet(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// change gets the StatefulSet, applies f and updates it, retrying on conflicts.
func change(t *testing.T, ns, name string, f func(*appsv1beta1.StatefulSet)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, f)
}

func replicas(n int32) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) { s.Spec.Replicas = &n }
}

func setImage(image string) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = image }
}

// listPods returns the pods labelled app=<app>, terminating ones only when withTerminating.
func listPods(ctx context.Context, ns, app string, withTerminating bool) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if withTerminating || p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// havePods is a wait condition that holds while n pods of app are in ns, terminating ones
// counted only when withTerminating.
func havePods(ns, app string, withTerminating bool, n int) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, app, withTerminating)
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == n, fmt.Sprintf("pods %v", names(pods)))
	}
}

func names(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// waitSettled waits until the status says every one of replicas is updated, ready and
// available, the current revision is the update revision, the controller has seen the latest
// spec, and exactly the pods named want are live.
func waitSettled(t *testing.T, ns, name string, timeout time.Duration, want ...string) *appsv1beta1.StatefulSet {
	t.Helper()
	replicas := int32(len(want))
	sort.Strings(want)
	var set *appsv1beta1.StatefulSet
	framework.Eventually(t, timeout, fmt.Sprintf("StatefulSet %s settles with pods %v", name, want), func(ctx context.Context) error {
		var err error
		if set, err = getSet(ctx, ns, name); err != nil {
			return err
		}
		st := set.Status
		if st.ObservedGeneration != set.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, set.Generation)
		}
		if st.Replicas != replicas || st.ReadyReplicas != replicas || st.UpdatedReplicas != replicas || st.UpdatedReadyReplicas != replicas ||
			st.AvailableReplicas != replicas || st.UpdatedAvailableReplicas != replicas || st.CurrentReplicas != replicas || st.CurrentRevision != st.UpdateRevision {
			return fmt.Errorf("status %+v", st)
		}
		pods, err := listPods(ctx, ns, name, true)
		if err != nil {
			return err
		}
		if got := names(pods); strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("pods %v", got)
		}
		return nil
	})
	return set
}

// createSettled creates set and waits until it settles with the pods named want.
func createSettled(t *testing.T, set *appsv1beta1.StatefulSet, want ...string) *appsv1beta1.StatefulSet {
	t.Helper()
	framework.Create(t, env.Client, set)
	return waitSettled(t, set.Namespace, set.Name, rollout, want...)
}

// deleteAndWaitBack deletes old and waits until it is back: see waitBack.
func deleteAndWaitBack(t *testing.T, old corev1.Pod, what string, check func(p *corev1.Pod) error) {
	t.Helper()
	framework.Delete(t, env.Client, &old)
	waitBack(t, old, what, check)
}

// waitBack waits until a pod of old's name but another UID is live and check accepts it: a
// StatefulSet makes a deleted or failed pod again under the same name.
func waitBack(t *testing.T, old corev1.Pod, what string, check func(p *corev1.Pod) error) {
	t.Helper()
	framework.WaitFor(t, env.Client, client.ObjectKeyFromObject(&old), rollout, what, func(p *corev1.Pod) error {
		if p.UID == old.UID || p.DeletionTimestamp != nil {
			return fmt.Errorf("%s is still the old pod", old.Name)
		}
		return check(p)
	})
}

// withEnv is a change that sets the first container's env to name=value alone: a change that
// cannot go in place.
func withEnv(name, value string) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: name, Value: value}}
	}
}

// patchPodAnnotation sets (or, with value "", removes) an annotation on a pod.
func patchPodAnnotation(t *testing.T, ns, pod, key, value string) {
	t.Helper()
	patchPodMeta(t, ns, pod, "annotations", key, value)
}

// patchPodLabel sets (or, with value "", removes) a label on a pod.
func patchPodLabel(t *testing.T, ns, pod, key, value string) {
	t.Helper()
	patchPodMeta(t, ns, pod, "labels", key, value)
}

// patchPodMeta sets key to value in the pod's metadata field (labels or annotations), or
// removes it when value is "".
func patchPodMeta(t *testing.T, ns, pod, field, key, value string) {
	t.Helper()
	var v any = value
	if value == "" {
		v = nil
	}
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{field: map[string]any{key: v}}})
	framework.MergePatch(t, env.Client, &corev1.Pod{ObjectMeta: metaKey(ns, pod)}, string(raw))
}

// sampler watches a StatefulSet's pods while a rollout runs and keeps the worst it saw; read
// its figures once finish has returned.
type sampler struct {
	*framework.Sampler
	maxUnavailable int // replicas minus ready live pods
	maxTotal       int // pods, terminating ones too
	maxNotReady    int // live pods that are not ready
	samples        int
}

// sample starts sampling the pods of app every 20ms until finish is called.
func sample(ns, app string, replicas int) *sampler {
	s := &sampler{}
	s.Sampler = framework.Sample(20*time.Millisecond, func() {
		pods, err := listPods(context.Background(), ns, app, true)
		if err != nil {
			return
		}
		ready, notReady := 0, 0
		for i := range pods {
			switch {
			case pods[i].DeletionTimestamp != nil:
			case framework.PodReady(&pods[i]) && framework.PodCondition(&pods[i], appspub.InPlaceUpdateReady) != corev1.ConditionFalse:
				ready++
			default:
				notReady++
			}
		}
		s.samples++
		s.maxUnavailable = max(s.maxUnavailable, replicas-ready)
		s.maxTotal = max(s.maxTotal, len(pods))
		s.maxNotReady = max(s.maxNotReady, notReady)
	})
	return s
}

// notReadyLive is the most live pods that were not ready at once; call it after finish.
func (s *sampler) notReadyLive() int { return s.maxNotReady }

func (s *sampler) finish() (maxUnavailable, maxTotal, samples int) {
	s.Stop()
	return s.maxUnavailable, s.maxTotal, s.samples
}

// argoHealth reads a StatefulSet as Argo CD's built-in health check for apps.kruise.io
// StatefulSet does (resource_customizations/apps.kruise.io/StatefulSet/health.lua): from the
// object as served, where an absent field is nil, not zero.
func argoHealth(ctx context.Context, ns, name string) (string, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appsv1beta1.GroupVersion.WithKind("StatefulSet"))
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return "", err
	}
	if u.GetDeletionTimestamp() != nil {
		return "Progressing", nil
	}
	status, ok := u.Object["status"].(map[string]any)
	if !ok {
		return "Progressing", nil
	}
	num := func(m map[string]any, k string) (int64, bool) {
		v, ok := m[k].(int64)
		return v, ok
	}
	observed, _ := num(status, "observedGeneration")
	if u.GetGeneration() != observed {
		return "Progressing", nil
	}
	ru, _, _ := unstructured.NestedMap(u.Object, "spec", "updateStrategy", "rollingUpdate")
	paused, _ := ru["paused"].(bool)
	updatedAvailable, hasUpdatedAvailable := num(status, "updatedAvailableReplicas")
	replicas, _ := num(status, "replicas")
	updated, _ := num(status, "updatedReplicas")
	partition, hasPartition := num(ru, "partition")
	switch {
	case paused || !hasUpdatedAvailable:
		return "Suspended", nil
	case (!hasPartition || partition != 0) && u.GetGeneration() > 1:
		// Lua's nil ~= 0 is true: an absent partition takes this branch too.
		if updated > replicas-partition {
			return "Suspended", nil
		}
		return "Progressing", nil
	case updatedAvailable == replicas:
		return "Healthy", nil
	default:
		return "Degraded", nil
	}
}

func metaKey(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

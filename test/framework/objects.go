package framework

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a pointer to an API type T, as the generic helpers below take it.
type Object[T any] interface {
	*T
	client.Object
}

// Get reads the object at key and fails t when it cannot.
func Get[T any, P Object[T]](t testing.TB, c client.Client, key client.ObjectKey) P {
	t.Helper()
	obj := P(new(T))
	if err := c.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("get %s %s: %v", kindOf[T](), key.Name, err)
	}
	return obj
}

// Change reads the object at key, applies f and updates it, again from a fresh read on every
// conflict, and fails t when that does not succeed.
func Change[T any, P Object[T]](t testing.TB, c client.Client, key client.ObjectKey, f func(P)) {
	t.Helper()
	if err := TryChange(context.Background(), c, key, f); err != nil {
		t.Fatalf("update %s %s: %v", kindOf[T](), key.Name, err)
	}
}

// ChangeStatus is Change for the status sub-resource: what a kubelet or another controller
// would write.
func ChangeStatus[T any, P Object[T]](t testing.TB, c client.Client, key client.ObjectKey, f func(P)) {
	t.Helper()
	if err := change(context.Background(), c, key, f, c.Status().Update); err != nil {
		t.Fatalf("update the status of %s %s: %v", kindOf[T](), key.Name, err)
	}
}

// Delete deletes obj and fails t when the apiserver refuses it.
func Delete(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Delete(context.Background(), obj); err != nil {
		t.Fatalf("delete %T %s: %v", obj, obj.GetName(), err)
	}
}

// WaitPodsReady waits until every named pod of ns is Ready, for at most timeout.
func WaitPodsReady(t testing.TB, c client.Client, ns string, timeout time.Duration, names ...string) {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("pods %v Ready", names), func(ctx context.Context) error {
		for _, name := range names {
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
				return err
			}
			if !PodReady(p) {
				return fmt.Errorf("pod %s not Ready", name)
			}
		}
		return nil
	})
}

// WaitForEvent waits until one of the events recorded in ns matches, for at most timeout; what
// names the wait in the failure, which lists the events seen.
func WaitForEvent(t testing.TB, c client.Client, ns string, timeout time.Duration, what string, match func(e *corev1.Event) bool) {
	t.Helper()
	Eventually(t, timeout, what, func(ctx context.Context) error {
		events := &corev1.EventList{}
		if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		var seen []string
		for i := range events.Items {
			e := &events.Items[i]
			if match(e) {
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s %s/%s %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason))
		}
		return fmt.Errorf("no such event among %v", seen)
	})
}

// WaitGone waits until the object at key no longer exists, for at most timeout; obj is an empty
// object of its kind and what names the wait in the failure.
func WaitGone(t testing.TB, c client.Client, key client.ObjectKey, obj client.Object, timeout time.Duration, what string) {
	t.Helper()
	Eventually(t, timeout, what, func(ctx context.Context) error {
		err := c.Get(ctx, key, obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%T %s still there", obj, key.Name)
	})
}

// MergePatch applies the JSON merge patch to obj (only its namespace and name are read) and
// fails t when the apiserver refuses it: a label, a finalizer or a field set or removed as a
// user or another controller would.
func MergePatch(t testing.TB, c client.Client, obj client.Object, patch string) {
	t.Helper()
	if err := c.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("merge-patch %T %s with %s: %v", obj, obj.GetName(), patch, err)
	}
}

// TryChange is Change that returns the last error instead of failing a test, for an update a
// webhook may refuse.
func TryChange[T any, P Object[T]](ctx context.Context, c client.Client, key client.ObjectKey, f func(P)) error {
	return change(ctx, c, key, f, func(ctx context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
		return c.Update(ctx, obj)
	})
}

// change reads the object at key, applies f and writes it with write, again from a fresh read
// on every conflict.
func change[T any, P Object[T]](ctx context.Context, c client.Client, key client.ObjectKey, f func(P),
	write func(context.Context, client.Object, ...client.SubResourceUpdateOption) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := P(new(T))
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		f(obj)
		return write(ctx, obj)
	})
}

// kindOf is the name of the Go type T, which for API types is their kind.
func kindOf[T any]() string { return reflect.TypeFor[T]().Name() }

// LivePods returns the pods of ns labelled app=<app> that are not terminating, sorted by name.
func LivePods(ctx context.Context, c client.Client, ns, app string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LiveClaims returns the PersistentVolumeClaims of ns that are not being deleted, sorted by name.
func LiveClaims(ctx context.Context, c client.Client, ns string) ([]corev1.PersistentVolumeClaim, error) {
	var list corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []corev1.PersistentVolumeClaim
	for _, pvc := range list.Items {
		if pvc.DeletionTimestamp == nil {
			out = append(out, pvc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// MustLivePods is LivePods that fails t on an error.
func MustLivePods(t testing.TB, c client.Client, ns, app string) []corev1.Pod {
	t.Helper()
	pods, err := LivePods(context.Background(), c, ns, app)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// WaitForPods lists the live pods of ns labelled app=<app> (LivePods) until check accepts them,
// for at most timeout, and returns the pods it accepted; what names the wait in the failure.
func WaitForPods(t testing.TB, c client.Client, ns, app string, timeout time.Duration, what string, check func(pods []corev1.Pod) error) []corev1.Pod {
	t.Helper()
	return waitAccepted(t, timeout, what, func(ctx context.Context) ([]corev1.Pod, error) {
		return LivePods(ctx, c, ns, app)
	}, check)
}

// PodCondition is the status of p's condition of type ct, "" when p has none.
func PodCondition(p *corev1.Pod, ct corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

// PodReady reports whether p's Ready condition is True.
func PodReady(p *corev1.Pod) bool { return PodCondition(p, corev1.PodReady) == corev1.ConditionTrue }

// ContainerStatus is the status of p's container name, nil when p reports none.
func ContainerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// PodUIDs maps the pods' names to their UIDs.
func PodUIDs(pods []corev1.Pod) map[string]types.UID {
	out := map[string]types.UID{}
	for _, p := range pods {
		out[p.Name] = p.UID
	}
	return out
}

// SetPodCondition sets the condition ct of the pod at key to status, as a kubelet or a controller
// would, replacing one of that type or adding it.
func SetPodCondition(t testing.TB, c client.Client, key client.ObjectKey, ct corev1.PodConditionType, status corev1.ConditionStatus) {
	t.Helper()
	ChangeStatus(t, c, key, func(p *corev1.Pod) {
		cond := corev1.PodCondition{Type: ct, Status: status, LastTransitionTime: metav1.Now()}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == ct {
				p.Status.Conditions[i] = cond
				return
			}
		}
		p.Status.Conditions = append(p.Status.Conditions, cond)
	})
}

// WaitFor reads the object at key until check accepts it, for at most timeout, and returns the
// object it accepted; what names the wait in the failure.
func WaitFor[T any, P Object[T]](t testing.TB, c client.Client, key client.ObjectKey, timeout time.Duration, what string, check func(P) error) P {
	t.Helper()
	return waitAccepted(t, timeout, what, func(ctx context.Context) (P, error) {
		obj := P(new(T))
		return obj, c.Get(ctx, key, obj)
	}, check)
}

// waitAccepted reads with read until check accepts what it read, for at most timeout, and
// returns what it accepted; what names the wait in the failure.
func waitAccepted[V any](t testing.TB, timeout time.Duration, what string, read func(ctx context.Context) (V, error), check func(V) error) V {
	t.Helper()
	var got V
	Eventually(t, timeout, what, func(ctx context.Context) error {
		v, err := read(ctx)
		if err != nil {
			return err
		}
		if err := check(v); err != nil {
			return err
		}
		got = v
		return nil
	})
	return got
}

package sidecarset

import (
	"context"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// markStripes is how many locks serialise the marks of pods in this process; pods whose UIDs
// hash alike share one, which only costs them a short wait.
const markStripes = 64

// maxRemembered bounds how many pods' last written conditions Marks keeps. A pod is forgotten
// once a copy that includes the write is seen, when it is deleted, or to make room; a forgotten
// pod's next mark starts from the copy its caller holds.
const maxRemembered = 4096

// Marks writes pods' SidecarSetUpgradable condition. The condition's message is a map shared
// by every SidecarSet matching the pod and only this controller writes it, so it is written
// with a patch of that one condition and no resourceVersion: the kubelet's status writes in
// between cost no conflict and no second write. What the optimistic lock protected is kept in
// this process instead: the marks of one pod are serialised, and each starts from the newest
// condition known, the one in the caller's copy of the pod or the one this process last wrote
// for it, whichever carries the higher resourceVersion; so two SidecarSets marking one pod at
// once, or one marking from a copy that lacks the other's fresh entry, both keep their entry.
type Marks struct {
	client client.Client
	clock  clock.PassiveClock
	locks  [markStripes]sync.Mutex

	mu       sync.Mutex
	written  map[types.UID]corev1.PodCondition
	versions *expectations.ResourceVersion
}

// NewMarks returns Marks that write through c and stamp transitions with clk's time.
func NewMarks(c client.Client, clk clock.PassiveClock) *Marks {
	return &Marks{client: c, clock: clk, written: map[types.UID]corev1.PodCondition{}, versions: expectations.NewResourceVersion(clk)}
}

// Mark records in pod's SidecarSetUpgradable condition whether SidecarSet name can update its
// sidecars in place (see setUpgradable), and writes the condition when that changed it. pod
// is not modified.
func (m *Marks) Mark(ctx context.Context, pod *corev1.Pod, name string, ok bool) error {
	lock := m.lock(pod.UID)
	lock.Lock()
	defer lock.Unlock()

	cur := pod.DeepCopy()
	if mine, found := m.remembered(pod); found {
		podcondition.Set(cur, mine)
	}
	if !setUpgradable(cur, name, ok, metav1.NewTime(m.clock.Now())) {
		return nil
	}
	out, err := podcondition.PatchOwn(ctx, m.client, cur, *podcondition.Get(cur, appsv1alpha1.SidecarSetUpgradable))
	if apierrors.IsNotFound(err) {
		m.Forget(pod.UID)
		return nil
	}
	if err != nil {
		return err
	}
	if c := podcondition.Get(out, appsv1alpha1.SidecarSetUpgradable); c != nil {
		m.remember(out, *c)
	}
	return nil
}

// Forget drops what Marks remembers of the pod with uid, as when the pod is deleted.
func (m *Marks) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.written, uid)
	m.versions.Forget(uid)
}

func (m *Marks) lock(uid types.UID) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return &m.locks[h.Sum32()%markStripes]
}

// remembered returns the condition this process last wrote to pod when pod's copy does not
// include that write yet. Once a copy includes it, it is no longer needed and is dropped.
func (m *Marks) remembered(pod *corev1.Pod) (corev1.PodCondition, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, found := m.written[pod.UID]
	if !found {
		return corev1.PodCondition{}, false
	}
	if seen, _ := m.versions.Satisfied(pod); seen {
		delete(m.written, pod.UID)
		return corev1.PodCondition{}, false
	}
	return c, true
}

// remember keeps c as the condition written to pod at pod's resourceVersion, making room by
// dropping another pod when maxRemembered are kept.
func (m *Marks) remember(pod *corev1.Pod, c corev1.PodCondition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, found := m.written[pod.UID]; !found && len(m.written) >= maxRemembered {
		for uid := range m.written {
			delete(m.written, uid)
			m.versions.Forget(uid)
			break
		}
	}
	m.written[pod.UID] = c
	m.versions.Expect(pod)
}

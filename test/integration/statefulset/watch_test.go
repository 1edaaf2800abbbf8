package statefulset

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kruise-addon/kruise-addon/test/framework"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// podEvents watches the pods of a set from the moment it starts and records, in the order the
// apiserver made them, the names of pods created or deleted, and how many were created while a
// pod of a lower ordinal was missing or not ready.
type podEvents struct {
	mu        sync.Mutex
	deletions bool
	order     []string
	bad       int
	// state is the last seen pod of each name.
	state map[string]*corev1.Pod
}

func watchCreations(t *testing.T, ns, set string) *podEvents { return watchPods(t, ns, set, false) }
func watchDeletions(t *testing.T, ns, set string) *podEvents { return watchPods(t, ns, set, true) }

func watchPods(t *testing.T, ns, set string, deletions bool) *podEvents {
	t.Helper()
	pe := &podEvents{deletions: deletions, state: map[string]*corev1.Pod{}}
	env.WatchPods(t, ns, "app="+set, func(p *corev1.Pod) { pe.state[p.Name] = p }, func(typ watch.EventType, p *corev1.Pod) { pe.add(set, typ, p) })
	return pe
}

func (pe *podEvents) add(set string, typ watch.EventType, p *corev1.Pod) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	switch {
	case typ == watch.Added && !pe.deletions:
		pe.order = append(pe.order, p.Name)
		o, _ := strconv.Atoi(strings.TrimPrefix(p.Name, set+"-"))
		for lower := 0; lower < o; lower++ {
			prev, ok := pe.state[set+"-"+strconv.Itoa(lower)]
			if !ok || !framework.PodReady(prev) {
				pe.bad++
				break
			}
		}
	case typ == watch.Modified && pe.deletions && p.DeletionTimestamp != nil:
		if old, ok := pe.state[p.Name]; ok && old.DeletionTimestamp == nil {
			pe.order = append(pe.order, p.Name)
		}
	case typ == watch.Deleted && pe.deletions:
		if old, ok := pe.state[p.Name]; ok && old.DeletionTimestamp == nil {
			pe.order = append(pe.order, p.Name)
		}
		delete(pe.state, p.Name)
		return
	}
	pe.state[p.Name] = p
}

func (pe *podEvents) names() []string {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return append([]string(nil), pe.order...)
}

func (pe *podEvents) violations() int {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return pe.bad
}

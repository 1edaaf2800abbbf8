package podadmission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Snapshot holds the objects of one kind that the manager's informer holds, grouped under the
// keys an index function gives each and sorted by name, kept up to date from the informer's
// events. A step reads the objects under a pod's keys from it as they are, where a List from
// the cache would copy every one of them into a new list for every pod: with 100 SidecarSets
// that copy was most of what /mutate-pod allocated.
type Snapshot[T client.Object] struct {
	keys func(T) []string
	mu   sync.RWMutex
	// byKey holds, per key, a slice that is replaced on a change and never written once
	// handed out.
	byKey  map[string][]T
	synced func() bool
}

// WatchSnapshot returns the snapshot of obj's kind fed by informers (the manager's cache), with
// keys indexing each object. The informer need not have started.
func WatchSnapshot[T client.Object](ctx context.Context, informers cache.Informers, obj T, keys func(T) []string) (*Snapshot[T], error) {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("get the informer of %T: %w", obj, err)
	}
	s := &Snapshot[T]{keys: keys, byKey: map[string][]T{}}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.set(nil, o) },
		UpdateFunc: func(old, o any) { s.set(old, o) },
		DeleteFunc: func(o any) { s.set(o, nil) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch %T: %w", obj, err)
	}
	s.synced = reg.HasSynced
	return s, nil
}

// Get returns the objects under key, sorted by name, and whether the informer's first list has
// arrived (until then the snapshot may miss objects and the caller should list the cache). The
// objects and the slice are shared: callers must not change them.
func (s *Snapshot[T]) Get(key string) ([]T, bool) {
	if !s.synced() {
		return nil, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byKey[key], true
}

// set replaces old with cur under their keys; either may be nil (an add, a delete).
func (s *Snapshot[T]) set(old, cur any) {
	if d, ok := old.(toolscache.DeletedFinalStateUnknown); ok {
		old = d.Obj
	}
	o, hadOld := old.(T)
	c, hasCur := cur.(T)
	var keys []string
	if hadOld {
		keys = append(keys, s.keys(o)...)
	}
	if hasCur {
		keys = append(keys, s.keys(c)...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		prev := s.byKey[key]
		next := make([]T, 0, len(prev)+1)
		for _, p := range prev {
			if (!hadOld || p.GetUID() != o.GetUID()) && (!hasCur || p.GetUID() != c.GetUID()) {
				next = append(next, p)
			}
		}
		if hasCur && slices.Contains(s.keys(c), key) {
			next = append(next, c)
			slices.SortFunc(next, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
		}
		if len(next) == 0 {
			delete(s.byKey, key)
			continue
		}
		s.byKey[key] = next
	}
}

package podadmission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
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
	// members holds, per key, the objects under it by UID.
	members map[string]map[types.UID]T
	// sorted holds, per key, the members sorted by name, built on the first Get after a change:
	// a burst of events (the informer's first list, a status write to every object) costs one
	// sort, not one per event. A slice is never written once handed out.
	sorted map[string][]T
	synced func() bool
}

// WatchSnapshot returns the snapshot of obj's kind fed by informers (the manager's cache), with
// keys indexing each object. The informer need not have started.
func WatchSnapshot[T client.Object](ctx context.Context, informers cache.Informers, obj T, keys func(T) []string) (*Snapshot[T], error) {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("get the informer of %T: %w", obj, err)
	}
	s := &Snapshot[T]{keys: keys, members: map[string]map[types.UID]T{}, sorted: map[string][]T{}}
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
	out, built := s.sorted[key]
	s.mu.RUnlock()
	if built {
		return out, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, built = s.sorted[key]; built {
		return out, true
	}
	for _, o := range s.members[key] {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
	s.sorted[key] = out
	return out, true
}

// set replaces old with cur under their keys; either may be nil (an add, a delete).
func (s *Snapshot[T]) set(old, cur any) {
	if d, ok := old.(toolscache.DeletedFinalStateUnknown); ok {
		old = d.Obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := old.(T); ok {
		for _, key := range s.keys(o) {
			delete(s.members[key], o.GetUID())
			if len(s.members[key]) == 0 {
				delete(s.members, key)
			}
			delete(s.sorted, key)
		}
	}
	if c, ok := cur.(T); ok {
		for _, key := range s.keys(c) {
			if s.members[key] == nil {
				s.members[key] = map[types.UID]T{}
			}
			s.members[key][c.GetUID()] = c
			delete(s.sorted, key)
		}
	}
}

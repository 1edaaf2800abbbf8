package containermeta

import (
	"sync"
	"time"
)

// DefaultSettle is how long a container waits, once its restart is decided, before it is
// stopped. The daemon and the kubelet watch the pod separately; the kubelet must have the new
// labels and annotations when it starts the container again, or the new container gets the
// old env and has to be restarted once more (after the kubelet's back-off).
const DefaultSettle = 2 * time.Second

// settler remembers, per pod UID and container ID, when a restart was first decided, so that
// the stop waits out the settle period across reconciles. It holds only containers still to
// be stopped.
type settler struct {
	mu    sync.Mutex
	since map[string]map[string]time.Time
}

func newSettler() *settler { return &settler{since: map[string]map[string]time.Time{}} }

// due takes the containers (by container ID) whose restart is decided now for the pod and
// returns those whose settle period has passed and, when some still wait, how long until the
// next one is due. Containers of the pod no longer decided are forgotten.
func (s *settler) due(pod string, ids []string, now time.Time, settle time.Duration) ([]string, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.since[pod]
	next := map[string]time.Time{}
	var out []string
	var wait time.Duration
	for _, id := range ids {
		first, ok := prev[id]
		if !ok {
			first = now
		}
		next[id] = first
		left := settle - now.Sub(first)
		if left <= 0 {
			out = append(out, id)
			continue
		}
		if wait == 0 || left < wait {
			wait = left
		}
	}
	if len(next) == 0 {
		delete(s.since, pod)
	} else {
		s.since[pod] = next
	}
	return out, wait
}

// done forgets a stopped container, and forget a pod that is gone.
func (s *settler) done(pod, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.since[pod], id)
	if len(s.since[pod]) == 0 {
		delete(s.since, pod)
	}
}

func (s *settler) forget(pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.since, pod)
}

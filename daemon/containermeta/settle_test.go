package containermeta

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestSettlerDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const settle = 2 * time.Second
	type call struct {
		ids      []string
		at       time.Duration
		wantDue  []string
		wantWait time.Duration
	}
	type tcase struct {
		calls []call
	}
	tests := map[string]tcase{
		"a newly decided restart waits the settle period, then is due": {
			calls: []call{
				{ids: []string{"a"}, at: 0, wantWait: settle},
				{ids: []string{"a"}, at: time.Second, wantWait: time.Second},
				{ids: []string{"a"}, at: settle, wantDue: []string{"a"}},
			},
		},
		"each container waits from when its own restart was decided": {
			calls: []call{
				{ids: []string{"a"}, at: 0, wantWait: settle},
				{ids: []string{"a", "b"}, at: time.Second, wantWait: time.Second},
				{ids: []string{"a", "b"}, at: settle, wantDue: []string{"a"}, wantWait: time.Second},
			},
		},
		"a container no longer decided starts over if it is decided again": {
			calls: []call{
				{ids: []string{"a"}, at: 0, wantWait: settle},
				{ids: nil, at: time.Second},
				{ids: []string{"a"}, at: settle, wantWait: settle},
			},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s := newSettler()
		for i, c := range tt.calls {
			due, wait := s.due("pod", c.ids, t0.Add(c.at), settle)
			if diff := cmp.Diff(c.wantDue, due); diff != "" {
				t.Errorf("call %d due (-want +got):\n%s", i, diff)
			}
			if wait != c.wantWait {
				t.Errorf("call %d wait %v, want %v", i, wait, c.wantWait)
			}
		}
	})
}

func TestSettlerDoneForgets(t *testing.T) {
	s := newSettler()
	s.due("pod", []string{"a"}, time.Now(), time.Second)
	s.done("pod", "a")
	if len(s.since) != 0 {
		t.Errorf("settler keeps %v after the stop", s.since)
	}
	s.due("pod", []string{"a"}, time.Now(), time.Second)
	s.due("pod", nil, time.Now(), time.Second)
	if len(s.since) != 0 {
		t.Errorf("settler keeps %v once nothing of the pod is decided", s.since)
	}
	s.due("pod", []string{"a"}, time.Now(), time.Second)
	s.forget("pod")
	if len(s.since) != 0 {
		t.Errorf("settler keeps %v after the pod is gone", s.since)
	}
}

package expectations

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestScale(t *testing.T) {
	type step struct {
		observe bool
		action  Action
		name    string
	}
	type tcase struct {
		steps         []step
		wantSatisfied bool
	}
	tests := map[string]tcase{
		"nothing expected is satisfied": {wantSatisfied: true},
		"a create not yet observed is unsatisfied": {
			steps: []step{{action: Create, name: "a"}},
		},
		"a create observed is satisfied": {
			steps:         []step{{action: Create, name: "a"}, {observe: true, action: Create, name: "a"}},
			wantSatisfied: true,
		},
		"observing a delete does not satisfy a create of the same name": {
			steps: []step{{action: Create, name: "a"}, {observe: true, action: Delete, name: "a"}},
		},
		"one of two creates observed is unsatisfied": {
			steps: []step{{action: Create, name: "a"}, {action: Create, name: "b"}, {observe: true, action: Create, name: "a"}},
		},
		"an unexpected observation changes nothing": {
			steps:         []step{{observe: true, action: Delete, name: "x"}},
			wantSatisfied: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		s := NewScale(clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
		for _, st := range tc.steps {
			if st.observe {
				s.Observe("ns/cs", st.action, st.name)
			} else {
				s.Expect("ns/cs", st.action, st.name)
			}
		}
		got, _ := s.Satisfied("ns/cs")
		if got != tc.wantSatisfied {
			t.Fatalf("Satisfied() = %v, want %v (pending %v)", got, tc.wantSatisfied, s.Pending("ns/cs"))
		}
	})
}

func TestScaleReportsHowLongTheOldestWriteIsOutstanding(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Unix(100, 0))
	s := NewScale(c)
	s.Expect("k", Create, "a")
	c.SetTime(time.Unix(130, 0))
	s.Expect("k", Create, "b")
	_, waited := s.Satisfied("k")
	testkit.Diff(t, "waited", 30*time.Second, waited)
	s.Forget("k")
	if ok, _ := s.Satisfied("k"); !ok {
		t.Fatal("Forget left expectations behind")
	}
}

func TestResourceVersion(t *testing.T) {
	obj := func(rv string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{UID: types.UID("u1"), ResourceVersion: rv}
	}
	type tcase struct {
		expect, cached string
		wantSatisfied  bool
	}
	tests := map[string]tcase{
		"a cache older than our write is unsatisfied": {expect: "10", cached: "9"},
		"a cache at our write is satisfied":           {expect: "10", cached: "10", wantSatisfied: true},
		"a cache newer than our write is satisfied":   {expect: "10", cached: "11", wantSatisfied: true},
		"a version that does not parse never blocks":  {expect: "x", cached: "1", wantSatisfied: true},
		"numeric order, not string order, decides":    {expect: "9", cached: "10", wantSatisfied: true},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		r := NewResourceVersion(clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
		r.Expect(obj(tc.expect))
		got, _ := r.Satisfied(obj(tc.cached))
		if got != tc.wantSatisfied {
			t.Fatalf("Satisfied() = %v, want %v", got, tc.wantSatisfied)
		}
	})
}

package bench

import (
	"fmt"
	"sync"
	"testing"
)

// scenario is one measured scenario of a bench process. A scenario takes minutes, so it runs
// once however large b.N is, and b.N only repeats its report, which is printed the first time.
type scenario struct {
	once sync.Once
	err  error
	out  []string
}

// report runs the scenario on its first call and prints its figures; a failed run fails every
// call.
func (s *scenario) report(b *testing.B, run func(*testing.B) ([]string, error)) {
	s.once.Do(func() { s.out, s.err = run(b) })
	if s.err != nil {
		b.Fatal(s.err)
	}
	for _, l := range s.out {
		fmt.Println(l)
	}
	s.out = nil
}

package imagepuller

import (
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestStatusDelay: progress is written at most once per interval while tags still wait or
// pull, and the status that leaves every tag final goes out at once.
func TestStatusDelay(t *testing.T) {
	last := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type tcase struct {
		lastWrite, now time.Time
		settled        bool
		want           time.Duration
	}
	cases := map[string]tcase{
		"the first write goes out at once":                                         {now: last, want: 0},
		"progress right after a write waits out the interval":                      {lastWrite: last, now: last.Add(200 * time.Millisecond), want: 800 * time.Millisecond},
		"progress once the interval has passed goes out at once":                   {lastWrite: last, now: last.Add(1500 * time.Millisecond), want: -500 * time.Millisecond},
		"a status with every tag final goes out at once, even right after a write": {lastWrite: last, now: last.Add(200 * time.Millisecond), settled: true, want: 0},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "delay", tc.want, statusDelay(tc.lastWrite, tc.now, time.Second, tc.settled))
	})
}

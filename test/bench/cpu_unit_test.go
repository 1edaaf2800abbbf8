package bench

import (
	"os"
	"testing"
	"time"
)

func TestCPUTimeCountsThisProcessesWork(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the process's own clock says it used 100 ms more: cpuTime must see it.
	deadline := time.Now().Add(time.Minute)
	x := 0
	for time.Now().Before(deadline) {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		now, err := cpuTime(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now-before >= 100*time.Millisecond {
			return
		}
	}
	t.Fatalf("cpuTime did not grow by 100 ms in a minute of spinning (%d)", x)
}

package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// heapLine says, from a heap profile taken just after a collection (heap?gc=1), how large the
// live heap is and which functions allocated most of it; `go tool pprof` reads the profile, as
// a person would. It never fails: what could not be read is said in the line.
func (o *observer) heapLine(phase, file string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-sample_index=inuse_space", "-top", "-nodecount=4",
		filepath.Join(o.dir, file)).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("  %s: heap profile unreadable: %v", phase, err)
	}
	total, top := parsePprofTop(string(out))
	return fmt.Sprintf("  %s: live heap %s after a GC; most of it allocated by %s (go tool pprof -sample_index=inuse_space %s)",
		phase, total, strings.Join(top, ", "), filepath.Join(o.dir, file))
}

// parsePprofTop reads `go tool pprof -top`: the total ("... 100% of 23016.25kB total") and each
// row's function with its flat size.
func parsePprofTop(out string) (string, []string) {
	total := "unknown"
	var top []string
	rows := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "Showing nodes accounting for") && len(f) >= 2 && f[len(f)-1] == "total":
			total = f[len(f)-2]
		case len(f) > 0 && f[0] == "flat":
			rows = true
		case rows && len(f) >= 6:
			top = append(top, fmt.Sprintf("%s %s", f[5], f[0]))
		}
	}
	return total, top
}

// heapNow saves a heap profile of the manager now, as <name>-heap.pb.gz, and says what it
// holds (heapLine).
func (o *observer) heapNow(name string) string {
	if err := o.save(context.Background(), "heap?gc=1", name+"-heap.pb.gz"); err != nil {
		return fmt.Sprintf("  %s: heap profile failed: %v", name, err)
	}
	return o.heapLine(name, name+"-heap.pb.gz")
}

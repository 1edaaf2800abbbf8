package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// heapNow saves a heap profile of the manager now, taken just after a collection (heap?gc=1),
// as <name>-heap.pb.gz, and says what its memory is made of: the live heap and the Go
// runtime's other parts, read from its metrics right after that collection, and the functions
// that allocated most of the live heap, read from the profile by `go tool pprof` as a person
// would. It never fails: what could not be read is said in the line.
func (o *observer) heapNow(name string) string {
	file := name + "-heap.pb.gz"
	if err := o.save(context.Background(), "heap?gc=1", file); err != nil {
		return fmt.Sprintf("  %s: heap profile failed: %v", name, err)
	}
	runtimeParts := "runtime metrics unreadable"
	if s, err := o.scrape(context.Background()); err != nil {
		runtimeParts += ": " + err.Error()
	} else {
		runtimeParts = describeGoMemory(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := filepath.Join(o.dir, file)
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-sample_index=inuse_space", "-top", "-nodecount=4", path).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("  %s: %s; heap profile %s unreadable: %v", name, runtimeParts, path, err)
	}
	return fmt.Sprintf("  %s: %s; most of the live heap allocated by %s (go tool pprof -sample_index=inuse_space %s)",
		name, runtimeParts, strings.Join(parsePprofTop(string(out)), ", "), path)
}

// describeGoMemory says, from a scrape of the Go collector's gauges, what the process's
// anonymous memory is made of: the live heap (heap_alloc just after a collection), heap spans
// in use, heap memory kept from the OS though free, stacks, and the runtime's own structures.
func describeGoMemory(s sample) string {
	mb := func(name string) float64 { return s[name+"{}"] / (1 << 20) }
	return fmt.Sprintf("live heap %.1f MB after a GC, heap in use %.1f MB, heap free but kept from the OS %.1f MB, stacks %.1f MB, GC and runtime structures %.1f MB, all from the OS %.1f MB",
		mb("go_memstats_heap_alloc_bytes"), mb("go_memstats_heap_inuse_bytes"),
		mb("go_memstats_heap_idle_bytes")-mb("go_memstats_heap_released_bytes"), mb("go_memstats_stack_inuse_bytes"),
		mb("go_memstats_gc_sys_bytes")+mb("go_memstats_mspan_sys_bytes")+mb("go_memstats_mcache_sys_bytes")+mb("go_memstats_buck_hash_sys_bytes")+mb("go_memstats_other_sys_bytes"),
		mb("go_memstats_sys_bytes"))
}

// parsePprofTop reads the rows of `go tool pprof -top`: each row's function with its flat size.
func parsePprofTop(out string) []string {
	var top []string
	rows := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "flat":
			rows = true
		case rows && len(f) >= 6:
			top = append(top, fmt.Sprintf("%s %s", f[5], f[0]))
		}
	}
	return top
}

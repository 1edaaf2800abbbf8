package bench

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTicks = 100

// cpuTime reads the CPU time, user and system, that process pid has used so far.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces: count from its end.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// cpuMeter measures the CPU time a set of processes use between its start and a reading. On
// these shared two-core machines a phase is bound by CPU, so what each process used explains
// its wall time better than the wall time itself, and varies less from run to run.
type cpuMeter struct {
	pids  map[string]int
	start map[string]time.Duration
}

// newCPUMeter starts measuring the processes named in pids. A process it cannot read is left
// out and said so by used.
func newCPUMeter(pids map[string]int) *cpuMeter {
	m := &cpuMeter{pids: pids, start: map[string]time.Duration{}}
	for name, pid := range pids {
		if t, err := cpuTime(pid); err == nil {
			m.start[name] = t
		}
	}
	return m
}

// used returns the CPU time each process used since the meter started.
func (m *cpuMeter) used() (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for name, t0 := range m.start {
		t, err := cpuTime(m.pids[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = t - t0
	}
	return out, nil
}

// describeCPU renders used CPU times as "kube-apiserver 12.3 s, etcd 2.1 s", largest first.
func describeCPU(used map[string]time.Duration) string {
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return used[names[i]] > used[names[j]] })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.1f s", n, used[n].Seconds())
	}
	return strings.Join(parts, ", ")
}

// benchPIDs are the processes whose CPU a phase reports: the control plane, the bench process
// itself (the node simulator and the waiting client) and, when given, the manager.
func benchPIDs(manager int) map[string]int {
	pids := env.PIDs()
	pids["bench (node simulator)"] = os.Getpid()
	if manager > 0 {
		pids["kruise-manager"] = manager
	}
	return pids
}

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// benchProcess is one of our binaries, built from this tree and run as its own process, so that
// its memory is its own and can be read from /proc.
type benchProcess struct {
	cmd *exec.Cmd
	log string
}

// binaryAndPorts is what a component's process needs before it starts: the binary of pkg
// and n free loopback ports.
func binaryAndPorts(ctx context.Context, pkg string, n int) (string, []int, error) {
	bin, err := buildBinary(ctx, pkg)
	if err != nil {
		return "", nil, err
	}
	ports, err := framework.FreePorts(n)
	return bin, ports, err
}

// built holds the binaries built in this run, each once: a process started again (a manager
// restarted after a crash) starts at once, as a kubelet restarts a container.
var built struct {
	sync.Mutex
	dir   string
	paths map[string]string
}

// buildBinary builds the main package pkg, once per run, and returns the binary's path. It is
// built as the images build it (scripts/images): static, without cgo, symbols or debug
// information, so that the file-backed part of its resident memory is the shipped binary's.
func buildBinary(ctx context.Context, pkg string) (string, error) {
	built.Lock()
	defer built.Unlock()
	if bin, ok := built.paths[pkg]; ok {
		return bin, nil
	}
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "kruise-bench-bin-")
		if err != nil {
			return "", err
		}
		built.dir, built.paths = dir, map[string]string{}
	}
	bin := filepath.Join(built.dir, filepath.Base(pkg))
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	built.paths[pkg] = bin
	return bin, nil
}

// removeBuilt removes the binaries the run built.
func removeBuilt() {
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// startProcess runs bin with args and extra environment, its output in logPath; it dies with
// the bench binary.
func startProcess(bin string, args, env []string, logPath string) (*benchProcess, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the bench
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	return &benchProcess{cmd: cmd, log: logPath}, nil
}

// peakRSS reads the process's high-water resident set size from /proc.
func (p *benchProcess) peakRSS() string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// rssParts says what the process's resident memory is made of now: anonymous pages (the Go
// heap, stacks and runtime) and file-backed pages (mostly the binary's own code and tables,
// clean and shared, which the kernel can drop and read again).
func (p *benchProcess) rssParts() string {
	var kb [3]int64
	for i, key := range []string{"VmRSS", "RssAnon", "RssFile"} {
		v, err := procStatusKB(p, key)
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		kb[i] = v
	}
	return fmt.Sprintf("%d MB (anonymous %d MB, file-backed %d MB)", kb[0]/1024, kb[1]/1024, kb[2]/1024)
}

// stop asks the process to end (SIGTERM) and kills it if it has not within 30 s.
func (p *benchProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// saveLog copies the process's log next to the profiles, as <name>.log, so that a figure's
// errors and conflicts can be read after the run; it returns the copy's path, or what failed.
func (p *benchProcess) saveLog(name string) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(not saved: %v)", err)
	}
	dst := filepath.Join(benchOutDir(), name+".log")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Sprintf("(not saved: %v)", err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Sprintf("(not saved: %v)", err)
	}
	return dst
}

// age is how long the process has run, from /proc: a start-up timed from it leaves out the
// build before the process, with the resolution of the kernel's clock ticks.
func (p *benchProcess) age() (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	uptime, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, err
	}
	// Field 22, counted after the command name, which may hold spaces, closes with ")".
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 20 {
		return 0, fmt.Errorf("short /proc/%d/stat", p.cmd.Process.Pid)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return 0, err
	}
	up, err := strconv.ParseFloat(strings.Fields(string(uptime))[0], 64)
	if err != nil {
		return 0, err
	}
	const clockTicks = 100 // USER_HZ, 100 on every Linux architecture Go runs the bench on
	return time.Duration((up - float64(ticks)/clockTicks) * float64(time.Second)), nil
}

// procStatusKB reads a kB figure, such as VmRSS or VmHWM, from the process's /proc status.
func procStatusKB(p *benchProcess, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, p.cmd.Process.Pid)
}

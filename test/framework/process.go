package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// process is one control-plane binary started by this package.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // valid after exited is closed
}

// startProcess starts bin with args, its output going to logPath.
//
// The child gets a parent-death signal (see setParentDeathSignal) so that it cannot outlive
// the test binary, even when that binary panics or is killed with SIGKILL. Linux delivers
// that signal when the thread that forked the child exits, not when the process does, so the
// fork happens on a goroutine locked to its OS thread that stays alive, waiting for the child,
// for as long as the child runs.
func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setParentDeathSignal(cmd.SysProcAttr)

	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Deliberately never unlocked: when this goroutine returns, the runtime ends the
		// thread, which is only safe once the child is gone.
		runtime.LockOSThread()
		defer logFile.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// pid returns the process id of the running child.
func (p *process) pid() int { return p.cmd.Process.Pid }

// running reports whether the child has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop asks the child to exit with SIGTERM and kills it if it is still there after grace.
// The control plane's data is throw-away, so a kill loses nothing; the grace only keeps the
// logs readable.
func (p *process) stop(grace time.Duration) error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.exited
	return nil
}

// logTail returns the last n lines of the process log, for error messages.
func (p *process) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// exitError describes why the process ended, with the end of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.waitErr, p.logPath, p.logTail(20))
}

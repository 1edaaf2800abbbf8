package framework

import "syscall"

// setParentDeathSignal makes the kernel kill the child when its parent thread exits.
func setParentDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}

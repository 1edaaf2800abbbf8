//go:build !linux

package framework

import "syscall"

// setParentDeathSignal has no equivalent outside Linux; there Stop is the only clean-up, and a
// killed test binary can leave etcd and kube-apiserver behind.
func setParentDeathSignal(*syscall.SysProcAttr) {}

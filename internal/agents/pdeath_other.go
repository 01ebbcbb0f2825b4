//go:build !linux

package agents

import "syscall"

// dieWithParent is Linux only: elsewhere a gateway killed with SIGKILL leaves its agents to their stdin's EOF.
func dieWithParent(*syscall.SysProcAttr) {}

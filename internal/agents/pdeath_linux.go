package agents

import "syscall"

// dieWithParent makes the process receive SIGKILL when the thread that started it (the spawner's) ends.
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

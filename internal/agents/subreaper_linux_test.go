package agents

import "golang.org/x/sys/unix"

// becomeSubreaper makes the test process what cmd/gateway makes the gateway: orphaned descendants of its
// agents are re-parented to it, so the tests see that killed strays are reaped, not left as zombies.
func becomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

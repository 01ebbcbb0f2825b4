package main

import "golang.org/x/sys/unix"

// becomeSubreaper makes orphaned descendants of the gateway's agents its children instead of init's, so the
// gateway can still find, kill and reap what an agent left behind outside its process group.
func becomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

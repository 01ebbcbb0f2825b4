package confine

import (
	"fmt"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrictThread enforces the ruleset fd (none when fd < 0) on the calling thread, which must be locked, and
// drops CAP_SYS_PTRACE from what a program it executes can have.
func restrictThread(fd int, flags uint32) error {
	if fd >= 0 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %v", err)
		}
		if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
			return fmt.Errorf("landlock_restrict_self: %v", err)
		}
		_ = unix.Close(fd)
	}
	// Root keeps CAP_SYS_PTRACE across execve, and with it the gateway's /proc entries (its environ above
	// all) whatever the gateway's dumpable flag says: the command never gets it.
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("dropping CAP_SYS_PTRACE: %v", err)
	}
	return nil
}

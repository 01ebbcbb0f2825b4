package agents

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// SweepOrphans kills the processes of the gateway's uid that an earlier gateway process started (or whose
// ancestors it started) and that outlived it: those whose OwnerVar names a gateway process that no longer
// runs. Agents die with the gateway by their parent-death signal; what they started in a session of its own
// (setsid) does not, and is found here. It returns how many processes it killed. A process that cleared its
// environment is not found.
func SweepOrphans() int {
	uid := os.Getuid()
	procs := allProcs()
	alive := make(map[string]bool, len(procs))
	for _, p := range procs {
		if !p.zombie {
			alive[strconv.Itoa(p.pid)+"."+strconv.FormatUint(p.start, 10)] = true
		}
	}
	killed := 0
	for _, p := range procs {
		if p.zombie || p.pid == os.Getpid() {
			continue
		}
		if fi, err := os.Stat("/proc/" + strconv.Itoa(p.pid)); err != nil || !ownedBy(fi, uid) {
			continue
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err != nil {
			continue
		}
		owner, ok := envValue(data, OwnerVar)
		if !ok || alive[owner] {
			continue
		}
		if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed
}

// envValue returns the value of key in a NUL-separated environment.
func envValue(environ []byte, key string) (string, bool) {
	for _, e := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

package agents

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// An agent's process group does not hold everything it starts: a descendant that calls setsid(2) leaves the
// group, so the group kill misses it, and a double fork re-parents it away from the agent. ProcessTree
// (proctree.go) finds them by the agent's environment marker and by the descendants recorded before each
// signal. cmd/gateway makes the gateway a child subreaper, so orphaned descendants are re-parented to it;
// those it kills it must also reap, or they stay zombies. Only killed pids are ever reaped: never the
// agent's own pid, which os/exec waits for.

// procStat is what the gateway needs from /proc/<pid>/stat.
type procStat struct {
	pid, ppid, pgrp, session int
	zombie                   bool
	start                    uint64 // start time in clock ticks since boot: tells a recycled pid apart
}

// readProcStat parses /proc/<pid>/stat. The command name is in parentheses and may contain anything, so
// fields are counted from the last ')'.
func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] state, f[1] ppid, f[2] pgrp, f[3] session, ..., f[19] starttime
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	session, err3 := strconv.Atoi(f[3])
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procStat{}, false
	}
	return procStat{pid: pid, ppid: ppid, pgrp: pgrp, session: session, zombie: f[0] == "Z", start: start}, true
}

// allProcs reads every process's stat. Empty where there is no /proc.
func allProcs() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procStat, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// descendantsOf returns the processes descending from root, or in root's process group (members keep the
// group when their parent dies), with their start times. root itself is not included.
func descendantsOf(root int, procs []procStat) map[int]uint64 {
	children := make(map[int][]procStat)
	found := make(map[int]uint64)
	var queue []int
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
		if p.pgrp == root && p.pid != root {
			found[p.pid] = p.start
			queue = append(queue, p.pid)
		}
	}
	queue = append(queue, root)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if _, seen := found[c.pid]; !seen && c.pid != root {
				found[c.pid] = c.start
				queue = append(queue, c.pid)
			}
		}
	}
	return found
}

// reapKilled reaps the killed processes (pid → start time) that the gateway, a subreaper, has inherited. A
// killed process whose parent is another killed one is re-parented once that parent is gone; one whose
// parent is outside the tree is its parent's to reap. Waits never block (a process stuck in an
// uninterruptible sleep dies late): it polls for at most limit and leaves the rest to reapEscapedZombies.
func reapKilled(pending map[int]uint64, limit time.Duration) {
	self := os.Getpid()
	deadline := time.Now().Add(limit)
	for len(pending) > 0 {
		for pid, start := range pending {
			st, ok := readProcStat(pid)
			switch {
			case !ok || st.start != start:
				delete(pending, pid) // gone (reaped by someone) or a different process now
			case st.ppid == self:
				var ws syscall.WaitStatus
				got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				if got == pid || errors.Is(err, syscall.ECHILD) {
					delete(pending, pid)
				}
			case !recorded(pending, st.ppid):
				delete(pending, pid) // its parent is outside the agent's tree (init, another reaper): theirs to reap
			}
			// Otherwise it is still dying, or its parent is a killed process still dying: it will be re-parented.
		}
		if len(pending) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond) // death and re-parenting follow SIGKILL at once, barring D state
	}
}

func recorded(strays map[int]uint64, pid int) bool {
	_, ok := strays[pid]
	return ok
}

// reapEscapedZombies reaps the gateway's zombie children that are in a session other than the gateway's:
// descendants of agents that called setsid, were re-parented to the gateway (a subreaper) and have exited
// since, without having been recorded (their agent exited on its own). A process StartProcess started is
// its Cmd's to wait for, even in a session of its own (a terminal login's).
func reapEscapedZombies() {
	self := os.Getpid()
	mine, ok := readProcStat(self)
	if !ok {
		return
	}
	for _, p := range allProcs() {
		if p.ppid == self && p.zombie && p.session != mine.session {
			started.Lock()
			if _, waited := started.pids[p.pid]; !waited {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
			}
			started.Unlock()
		}
	}
}

package agents

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// MarkerVar is the environment variable that marks an agent process and everything it starts. Descendants
// inherit it unless they scrub their environment, so they are found in /proc wherever they went: a double
// fork re-parents them to the gateway and setsid takes them out of the agent's group, and neither drops it.
const MarkerVar = "ACP_GATEWAY_AGENT"

// ProcessTree is one agent process and everything it started. The owner adds Env to the process's
// environment, calls Started once it runs, Record before each signal it sends, and Reap once the process has
// been waited for (whether it was stopped or exited by itself). The same mechanism serves ACP agents (Conn)
// and native-dialect agents (package events).
type ProcessTree struct {
	env   string        // Static after construction; MarkerVar=<random id>.
	grace time.Duration // Static after construction; how long Reap waits for killed processes to be reapable.

	mu        sync.Mutex
	root      int            // Guarded by mu; the agent's pid, 0 before Started.
	rootStart uint64         // Guarded by mu; its start time, so a recycled pid is never taken for it.
	reaped    bool           // Guarded by mu; Reap ran: the root's pid may belong to another process now.
	strays    map[int]uint64 // Guarded by mu; descendants recorded while the root ran, pid → start time.
}

// NewProcessTree makes a tree with a fresh marker. grace bounds Reap's wait; 0 = 2 s.
func NewProcessTree(grace time.Duration) *ProcessTree {
	var id [12]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return &ProcessTree{env: MarkerVar + "=" + hex.EncodeToString(id[:]), grace: cmpDur(grace, 2*time.Second)}
}

// Env is the "K=V" entry to add to the agent's environment.
func (t *ProcessTree) Env() string { return t.env }

// Started records the agent's pid (also its process group id) right after it started.
func (t *ProcessTree) Started(pid int) {
	st, _ := readProcStat(pid)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.root, t.rootStart = pid, st.start
}

// Record adds the agent's current descendants (children, grandchildren, group members) to those killed by
// Reap. It catches descendants that scrubbed the marker from their environment, as long as they are still
// below the agent when it is signalled. Once the agent has been waited for, nothing is recorded.
func (t *ProcessTree) Record() {
	t.mu.Lock()
	root, start, reaped := t.root, t.rootStart, t.reaped
	t.mu.Unlock()
	if root == 0 || reaped {
		return
	}
	procs := allProcs()
	if !sameProcess(procs, root, start) {
		return // it has exited (and may be waited for at any moment): its pid says nothing any more
	}
	found := descendantsOf(root, procs)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reaped {
		return
	}
	if t.strays == nil {
		t.strays = make(map[int]uint64, len(found))
	}
	for pid, st := range found {
		t.strays[pid] = st
	}
}

// Kill sends sig to the agent's process group, unless the agent has already been waited for.
func (t *ProcessTree) Kill(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.root != 0 && !t.reaped {
		_ = syscall.Kill(-t.root, sig)
	}
}

// Reap runs once the agent has been waited for: it SIGKILLs what is left of its group, the recorded
// descendants that are still the same process, and every process of the gateway's uid that carries the
// agent's marker; then it reaps those re-parented to the gateway (a subreaper) with non-blocking waits,
// for at most the tree's grace, and the gateway's zombie children that escaped unmarked (strays.go). It never
// waits for the agent's own pid, which os/exec owns.
func (t *ProcessTree) Reap() {
	t.mu.Lock()
	root, strays := t.root, t.strays
	t.reaped, t.strays = true, nil
	t.mu.Unlock()
	if root == 0 {
		return
	}
	// The group outlives its leader while members remain, so its id cannot have been reused.
	_ = syscall.Kill(-root, syscall.SIGKILL)
	killed := make(map[int]uint64, len(strays))
	for pid, start := range strays {
		if st, ok := readProcStat(pid); ok && st.start == start && !st.zombie {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		killed[pid] = start
	}
	// Marked processes may start more marked processes while being found: scan until a pass finds none new.
	for pass := 0; pass < 5; pass++ {
		found := 0
		for _, p := range markedProcs(t.env, root) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL) // the marker was checked just before: not a recycled pid
			if _, seen := killed[p.pid]; !seen {
				killed[p.pid] = p.start
				found++
			}
		}
		if found == 0 {
			break
		}
	}
	delete(killed, root)
	reapKilled(killed, t.grace)
	reapEscapedZombies()
}

// markedProcs returns the live processes of the gateway's uid whose environment holds env, except root.
func markedProcs(env string, root int) []procStat {
	uid := os.Getuid()
	needle := []byte(env)
	var out []procStat
	for _, p := range allProcs() {
		if p.pid == root || p.zombie {
			continue // a zombie's environment cannot be read; it is reaped through its pid if recorded
		}
		if fi, err := os.Stat("/proc/" + strconv.Itoa(p.pid)); err != nil || !ownedBy(fi, uid) {
			continue
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err != nil || !hasEnvEntry(data, needle) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// hasEnvEntry reports whether a NUL-separated environment holds entry exactly.
func hasEnvEntry(environ, entry []byte) bool {
	for len(environ) > 0 {
		i := bytes.IndexByte(environ, 0)
		if i < 0 {
			return bytes.Equal(environ, entry)
		}
		if bytes.Equal(environ[:i], entry) {
			return true
		}
		environ = environ[i+1:]
	}
	return false
}

func ownedBy(fi os.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

func sameProcess(procs []procStat, pid int, start uint64) bool {
	for _, p := range procs {
		if p.pid == pid {
			return p.start == start && !p.zombie
		}
	}
	return false
}

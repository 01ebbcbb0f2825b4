package agents

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/acp-gateway/gateway/internal/confine"
)

// OwnerVar marks every process the gateway starts (agents, terminals) with the gateway process that started
// it, "<pid>.<start time>", so a later gateway can tell what an earlier one left behind (SweepOrphans).
const OwnerVar = "ACP_GATEWAY_OWNER"

// ownerID is this process, "<pid>.<start time>"; ownerEnv is its OwnerVar entry.
var (
	ownerID = func() string {
		st, _ := readProcStat(os.Getpid())
		return strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(st.start, 10)
	}()
	ownerEnv = OwnerVar + "=" + ownerID
)

// OwnerID names this gateway process as OwnerVar does.
func OwnerID() string { return ownerID }

// OwnerAlive reports whether the gateway process an OwnerID names still runs.
func OwnerAlive(id string) bool {
	pid, start, ok := strings.Cut(id, ".")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil {
		return false
	}
	st, found := readProcStat(n)
	return found && !st.zombie && strconv.FormatUint(st.start, 10) == start
}

// started are the processes StartProcess started that WaitProcess has not waited for yet: their os/exec Cmd
// reaps them, so reapEscapedZombies leaves them alone. The lock spans the spawner's start and record, and
// the reap's check and wait, so no started process is reaped in between.
var started = struct {
	sync.Mutex
	pids map[int]struct{}
}{pids: map[int]struct{}{}}

// WaitProcess waits for a process StartProcess started, as cmd.Wait does.
func WaitProcess(cmd *exec.Cmd) error {
	err := cmd.Wait()
	started.Lock()
	delete(started.pids, cmd.Process.Pid)
	started.Unlock()
	return err
}

// spawnReq is one command for the spawner goroutine.
type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var spawns = make(chan spawnReq)

// The spawner runs from the start, so a test that checks for leaked goroutines around one spawn sees it as
// already there; goleak.VerifyTestMain callers ignore it by its top function.
func init() { go spawner() }

// spawner starts every external process from one OS thread that never exits: the parent-death signal
// fires when the thread that forked the child ends, not the process, and Go ends a thread whose goroutine
// was locked to it when that goroutine exits.
func spawner() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	for req := range spawns {
		started.Lock()
		err := req.cmd.Start()
		if err == nil {
			started.pids[req.cmd.Process.Pid] = struct{}{}
		}
		started.Unlock()
		req.done <- err
	}
}

// StartProcess starts cmd so that it dies with the gateway (SIGKILL when the gateway's process ends, even by
// kill -9) and carries the gateway's owner marker; wait for it with WaitProcess. cmd.Env must be set. confined is what Wrap returned for
// cmd (nil when unconfined): a command the confinement helper could not execute fails here, as an exec
// failure fails cmd.Start, and has been waited for.
func StartProcess(cmd *exec.Cmd, confined *confine.Confined) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	dieWithParent(cmd.SysProcAttr)
	cmd.Env = append(cmd.Env, ownerEnv)
	done := make(chan error, 1)
	spawns <- spawnReq{cmd: cmd, done: done}
	err := <-done
	cmd.Env = nil // read only by Start; a confined command's holds its spec, and the Cmd lives with the process
	if err != nil {
		return err
	}
	if err := confined.Started(); err != nil {
		_ = WaitProcess(cmd) // the helper exits as soon as it has reported
		return err
	}
	return nil
}

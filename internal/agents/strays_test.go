package agents

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestStopKillsDescendantThatLeftTheGroup: a process the agent started in a session of its own (setsid) is
// outside the agent's process group, so the group kill misses it. After Stop it is gone — killed and, the
// test process being a subreaper like the gateway, reaped.
func TestStopKillsDescendantThatLeftTheGroup(t *testing.T) {
	c, sid := startTestAgent(t, "escape", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if stop, err := prompt(ctx, c, sid, "escape"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	pid := escapedPid(t, c)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("escaped process %d not running before Stop: %v", pid, err)
	}
	st, _ := readProcStat(pid)
	if st.pgrp == c.Pid() {
		t.Fatalf("escaped process %d is in the agent's group; the test proves nothing", pid)
	}
	c.Stop()
	waitGone(t, pid, "that left the agent's group still exists 10 s after Stop")
}

// TestStopKillsDoubleForkedDescendant: the usual daemon double fork — a middle process starts a setsid
// grandchild and exits — re-parents the grandchild to the gateway (the subreaper) before Stop can see it
// below the agent. It carries the agent's marker, so Stop still kills and reaps it.
func TestStopKillsDoubleForkedDescendant(t *testing.T) {
	c, sid := startTestAgent(t, "doublefork", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if stop, err := prompt(ctx, c, sid, "fork"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	pid := escapedPid(t, c)
	if st, ok := readProcStat(pid); !ok || st.ppid != os.Getpid() || st.pgrp == c.Pid() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("double-forked process %d is not a re-parented setsid process (%+v, %v); the test proves nothing", pid, st, ok)
	}
	c.Stop()
	waitGone(t, pid, "that was double-forked still exists 10 s after Stop")
}

// TestAgentExitKillsSetsidChild: an agent that starts a setsid child and then exits by itself takes the
// child with it once the gateway notices the exit; the child, re-parented to the gateway, is reaped.
func TestAgentExitKillsSetsidChild(t *testing.T) {
	c, sid := startTestAgent(t, "escape", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := prompt(ctx, c, sid, "escape and exit"); err == nil {
		t.Fatal("the prompt succeeded; the agent was to exit")
	}
	pid := escapedPid(t, c)
	<-c.Exited()
	waitGone(t, pid, "that the agent left behind still exists 10 s after the agent exited")
}

// waitGone waits (bounded) until pid no longer exists: killed and reaped. It kills it on failure so the
// test does not leave it behind.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			st, _ := readProcStat(pid)
			_ = syscall.Kill(pid, syscall.SIGKILL) // do not leave it behind
			t.Fatalf("process %d %s (kill 0: %v, stat %+v)", pid, what, err, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDescendantsOf: children, grandchildren and members of the root's group, not the root, not strangers.
func TestDescendantsOf(t *testing.T) {
	procs := []procStat{
		{pid: 1, ppid: 0, pgrp: 1, start: 1},
		{pid: 100, ppid: 1, pgrp: 100, start: 10},   // the gateway
		{pid: 200, ppid: 100, pgrp: 200, start: 20}, // the agent
		{pid: 201, ppid: 200, pgrp: 200, start: 21}, // its child
		{pid: 202, ppid: 201, pgrp: 202, start: 22}, // a grandchild that called setsid
		{pid: 203, ppid: 100, pgrp: 200, start: 23}, // an orphan of the group, re-parented to the gateway
		{pid: 204, ppid: 203, pgrp: 204, start: 24}, // its setsid child
		{pid: 300, ppid: 100, pgrp: 300, start: 30}, // another agent
		{pid: 301, ppid: 300, pgrp: 300, start: 31},
	}
	got := descendantsOf(200, procs)
	want := map[int]uint64{201: 21, 202: 22, 203: 23, 204: 24}
	if len(got) != len(want) {
		t.Fatalf("descendants %v, want %v", got, want)
	}
	for pid, start := range want {
		if got[pid] != start {
			t.Fatalf("descendants %v, want %v", got, want)
		}
	}
}

// TestEscapedZombieIsReaped: an agent that exits on its own leaves behind a setsid process that scrubbed its
// environment (so it carries no marker), which the gateway (a subreaper) inherits unrecognised. When that
// process ends, it must not stay a zombie of the gateway: the next agent exit reaps it.
func TestEscapedZombieIsReaped(t *testing.T) {
	c, sid := startTestAgent(t, "escape", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := prompt(ctx, c, sid, "escape scrubbed and exit"); err == nil {
		t.Fatal("the prompt succeeded; the agent was to exit")
	}
	<-c.Exited()
	pid := escapedPid(t, c)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil { // the escaped process ends by itself
		t.Fatalf("escaped process %d: %v", pid, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st, ok := readProcStat(pid); !ok || !st.zombie || st.ppid != os.Getpid(); st, ok = readProcStat(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie of the test process (%+v, %v)", pid, st, ok)
		}
		time.Sleep(10 * time.Millisecond)
	}

	other, _ := startTestAgent(t, "escape", Options{})
	other.Stop()
	if _, ok := readProcStat(pid); ok {
		t.Fatalf("zombie %d was not reaped when the next agent exited", pid)
	}
}

// escapedPid reads the pid the escape-mode test agent prints on stderr, which os/exec copies on a goroutine
// of its own: it may arrive after the prompt's answer.
func escapedPid(t *testing.T, c *Conn) int {
	t.Helper()
	re := regexp.MustCompile(`testagent: escaped (\d+)`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := re.FindStringSubmatch(c.Stderr()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no escaped pid on stderr: %q", c.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

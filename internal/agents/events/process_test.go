package events

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestShutdownKillsDoubleForkedGrandchild: a process that double-forks a setsid grandchild (the middle
// process exits, so the grandchild is re-parented to the gateway and is in no group of the process's) loses
// it when its session stops: the grandchild carries the process's marker, is killed and reaped.
func TestShutdownKillsDoubleForkedGrandchild(t *testing.T) {
	client := newTestClient()
	cfg := &Config{Command: testAgent, Args: []string{"-mode", "events-escape"}, Env: []string{"PATH=" + os.Getenv("PATH")}}
	h := newHarness(t, context.Background(), cfg, client)
	sid := h.newSession()
	if stop, err := h.prompt(sid, "fork"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	updates, _ := client.snapshot()
	pid := atoi(strings.TrimPrefix(messageText(updates), "escaped "))
	if pid <= 0 {
		t.Fatalf("no escaped pid in %q", messageText(updates))
	}
	stat, _ := readFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if f := statFields(stat); len(f) < 4 || f[1] != strconv.Itoa(os.Getpid()) || f[3] != strconv.Itoa(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d is not a re-parented session leader (%s); the test proves nothing", pid, stat)
	}
	if err := h.stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			stat, _ := readFile("/proc/" + strconv.Itoa(pid) + "/stat")
			_ = syscall.Kill(pid, syscall.SIGKILL) // do not leave it behind
			t.Fatalf("double-forked grandchild %d still exists 10 s after shutdown: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProcessThatStopsReadingStdin: a process that never reads its stdin lets the pipe fill up. The prompt's
// write does not hang (holding the stdin lock, which session/cancel and permission decisions need): it
// times out, the process is killed, and the prompt fails with an error that says it stopped reading.
func TestProcessThatStopsReadingStdin(t *testing.T) {
	client := newTestClient()
	cfg := &Config{Command: testAgent, Args: []string{"-mode", "events-deaf"}, WriteTimeout: 300 * time.Millisecond}
	h := newHarness(t, context.Background(), cfg, client)
	sid := h.newSession()
	big := strings.Repeat("m", 1<<20) // more than the pipe holds
	done := make(chan error, 1)
	go func() {
		_, err := h.prompt(sid, big)
		done <- err
	}()
	select {
	case err := <-done:
		re := requestError(err)
		if re == nil || !strings.Contains(mustJSON(re.Data), "stopped reading its input") {
			t.Fatalf("prompt to a process that does not read: %v", err)
		}
		t.Logf("prompt error data: %s", mustJSON(re.Data))
	case <-time.After(60 * time.Second):
		_ = h.toAgent.Close() // shutdown closes the stdin pipe, which ends the blocked write
		<-done
		t.Fatal("a prompt to a process that does not read its stdin still blocked after 60 s")
	}
}

// statFields splits /proc/<pid>/stat after the command name: state, ppid, pgrp, session, ...
func statFields(stat []byte) []string {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

package agents

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartedProcessKeepsNoEnvironment: the Cmd of an agent lives as long as the agent, and a confined one's
// environment holds the confinement spec (about 25 KiB), so StartProcess drops it once the process runs.
func TestStartedProcessKeepsNoEnvironment(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	cmd.Env = []string{"BIG=" + strings.Repeat("x", 25<<10)}
	if err := StartProcess(cmd, nil); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if cmd.Env != nil {
		t.Fatalf("the started command still holds its environment: %d entries", len(cmd.Env))
	}
}

// TestEscapedZombieReapLeavesStartedProcesses: a process the gateway started in a session of its own (a
// terminal login's, with Setsid) is its os/exec Cmd's to wait for. A tree's reap of escaped zombies took it
// once it had exited, and the login's Wait found no process state (a nil dereference in the gateway).
func TestEscapedZombieReapLeavesStartedProcesses(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := StartProcess(cmd, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, ok := readProcStat(cmd.Process.Pid); !ok || st.zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never exited")
		}
	}
	reapEscapedZombies()
	_ = WaitProcess(cmd)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("the command's own Wait lost its exit: %v", cmd.ProcessState)
	}
}

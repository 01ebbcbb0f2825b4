package agents

import (
	"os/exec"
	"strings"
	"testing"
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

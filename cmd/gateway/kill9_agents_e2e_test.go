package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGatewayKill9TakesAgentsAlong: a gateway process killed with SIGKILL takes its
// agents with it (their parent-death signal), and the next gateway to start kills what they left in a
// session of its own (setsid), which no signal of the dead gateway reaches, and removes their private TMPDIRs.
func TestGatewayKill9TakesAgentsAlong(t *testing.T) {
	wd := t.TempDir()
	pids := map[string]string{}
	for _, mode := range []string{"escape", "events-deaf"} {
		pids[mode] = filepath.Join(wd, "pids-"+mode)
		if err := os.Mkdir(pids[mode], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// events-deaf never reads its stdin nor writes its stdout: the gateway's end is no EOF or SIGPIPE to it.
	agentsFile := filepath.Join(t.TempDir(), "agents.json")
	file, _ := json.Marshal(map[string]any{"agent_servers": map[string]any{"deaf": map[string]any{
		"kind": "events", "command": testAgentBinary(t), "args": []string{"-mode", "events-deaf", "-pid-dir", pids["events-deaf"]},
	}}})
	if err := os.WriteFile(agentsFile, file, 0o600); err != nil {
		t.Fatal(err)
	}
	g1, child, exited := startChildGateway(t, "--workdir", wd, "--agents", agentsFile, "--default-agent", "escape",
		"--agent", "escape="+testAgentBinary(t)+" -mode escape -pid-dir "+pids["escape"])
	s := g1.createSession(nil)
	g1.createSession(map[string]string{"agent": "deaf"})
	var res struct{ StopReason, Text string }
	if code := g1.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", map[string]string{"text": "escape"}, &res); code != http.StatusOK {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	grandchild, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(res.Text), "escaped "))
	if err != nil {
		t.Fatalf("no escaped pid in %q", res.Text)
	}
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	agents := map[string]int{}
	for mode, dir := range pids {
		// The events process is started with the session but answers nothing: its pid file comes when it does.
		var names []os.DirEntry
		for deadline := time.Now().Add(20 * time.Second); len(names) == 0; time.Sleep(10 * time.Millisecond) {
			if names, err = os.ReadDir(dir); err != nil || len(names) > 1 || time.Now().After(deadline) {
				t.Fatalf("%s agent's pid files: %v %v", mode, names, err)
			}
		}
		pid, _ := strconv.Atoi(names[0].Name())
		agents[mode] = pid
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}

	// The agents' private TMPDIRs, named after the gateway process, outlive it.
	tmps, _ := filepath.Glob(filepath.Join(os.TempDir(), "acp-gateway-tmp-"+strconv.Itoa(child.Process.Pid)+".*"))
	if len(tmps) != len(agents) {
		t.Fatalf("private TMPDIRs of the gateway's agents: %v", tmps)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	for mode, pid := range agents {
		waitProcDead(t, pid, "the "+mode+" agent after its gateway was killed")
	}
	if !procAlive(grandchild) {
		t.Fatal("the setsid grandchild died with the gateway: nothing is left for the restart to sweep")
	}
	g2, _, _ := startChildGateway(t) // a restart, in any configuration
	waitProcDead(t, grandchild, "the setsid grandchild after a restart")
	if !strings.Contains(g2.logs.String(), "killed processes an earlier gateway process left running") {
		t.Errorf("the restart did not say what it swept:\n%s", g2.logs.String())
	}
	for _, dir := range tmps {
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the restart left %s: %v", dir, err)
		}
	}
}

// procAlive reports whether pid runs (exists and is not a zombie).
func procAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// waitProcDead polls until pid has exited (a zombie counts: this process, a subreaper, may be its parent
// now, and reaps it), for at most 20 s.
func waitProcDead(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for procAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: pid %d still runs", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}

//go:build linux

package acpws

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// The internal/testagent binary, built once for the package (removed by TestMain).
var (
	testAgentOnce sync.Once
	testAgentDir  string
	testAgentPath string
	testAgentErr  error
)

func testAgentBinary(t *testing.T) string {
	t.Helper()
	testAgentOnce.Do(func() {
		testAgentDir, testAgentErr = os.MkdirTemp("", "acpws-testagent-")
		if testAgentErr != nil {
			return
		}
		testAgentPath = filepath.Join(testAgentDir, "testagent")
		out, err := exec.Command("go", "build", "-o", testAgentPath, "github.com/acp-gateway/gateway/internal/testagent").CombinedOutput()
		if err != nil {
			testAgentErr = &buildError{err: err, out: string(out)}
		}
	})
	if testAgentErr != nil {
		t.Fatal(testAgentErr)
	}
	return testAgentPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building testagent: " + e.err.Error() + "\n" + e.out }

// richAgent is testagent as agent name, answering initialize with distinctive values (-init name) and starting
// a child in its process group when it does; every pid it starts is recorded in the returned directory.
func richAgent(t *testing.T, name string) (agents.Spec, string) {
	pids := t.TempDir()
	return agents.Spec{Name: name, Kind: agents.KindACP, Command: testAgentBinary(t),
		Args: []string{"-init", name, "-init-child", "-pid-dir", pids}}, pids
}

// recordedPids lists the pids an agent recorded in dir.
func recordedPids(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			t.Fatalf("pid file %q", e.Name())
		}
		out = append(out, pid)
	}
	return out
}

// running reports whether pid is still running (a zombie waiting for init to reap it does not count) or any
// process of the group pid leads is.
func running(pid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // state ppid pgrp …
		if len(f) > 2 && f[0] != "Z" && (e.Name() == strconv.Itoa(pid) || f[2] == strconv.Itoa(pid)) {
			return true
		}
	}
	return false
}

// TestInitializeProbesAgentBeforeAnySession: before any session of the agent exists, `/acp/{agent}`
// initialize reports the agent's own promptCapabilities, agentInfo and auth methods (learned by starting the
// agent once and asking it), beside the gateway's own capabilities; the probe leaves no process behind, and
// a second socket's initialize is answered from the cache without starting the agent again.
func TestInitializeProbesAgentBeforeAnySession(t *testing.T) {
	spec, pids := richAgent(t, "rich")
	e := newEnvCfg(t, Options{}, sessions.Config{}, spec)
	init := e.dial("/acp/rich").initialize()

	caps := init["agentCapabilities"].(map[string]any)
	prompt, _ := caps["promptCapabilities"].(map[string]any)
	if prompt["image"] != true || prompt["audio"] != true || prompt["embeddedContext"] != true {
		t.Errorf("promptCapabilities = %v, want the agent's (all true)", caps["promptCapabilities"])
	}
	info, _ := init["agentInfo"].(map[string]any)
	if info["name"] != "rich" || info["title"] != "Test agent rich" {
		t.Errorf("agentInfo = %v, want the agent's", init["agentInfo"])
	}
	// The gateway's own additions stay.
	if caps["loadSession"] != true || caps["sessionCapabilities"] == nil {
		t.Errorf("agentCapabilities lost the gateway's own: %v", caps)
	}
	if am, ok := init["authMethods"].([]any); !ok || len(am) != 0 {
		t.Errorf("authMethods = %v, want [] (sessions are started without an auth step)", init["authMethods"])
	}
	gw := caps["_meta"].(map[string]any)["gateway"].(map[string]any)
	if am, _ := gw["authMethods"].([]any); len(am) != 1 || am[0].(map[string]any)["id"] != "key-rich" {
		t.Errorf("_meta.gateway.authMethods = %v, want the agent's", gw["authMethods"])
	}
	if raw, _ := gw["agentCapabilities"].(map[string]any); raw == nil || raw["loadSession"] != true {
		t.Errorf("_meta.gateway.agentCapabilities = %v, want the agent's raw capabilities", gw["agentCapabilities"])
	}
	if n := len(e.reg.List()); n != 0 {
		t.Fatalf("the probe left %d sessions", n)
	}

	started := recordedPids(t, pids)
	if len(started) != 2 {
		t.Fatalf("the probe started %d processes, want the agent and its child", len(started))
	}
	// The agent is its own group leader; its child is in its group.
	waitFor(t, "the probed agent's process group to be gone", func() bool { return !running(started[0]) && !running(started[1]) })

	// Answered from the cache: no new process.
	if info := e.dial("/acp/rich").initialize()["agentInfo"].(map[string]any); info["name"] != "rich" {
		t.Errorf("second agentInfo = %v", info)
	}
	if n := len(recordedPids(t, pids)); n != 2 {
		t.Errorf("a second initialize started the agent again (%d pids)", n)
	}
}

// TestInitializeFallsBackWhenProbeFails: an agent that cannot be probed gets today's answer (the gateway's
// own agentInfo, empty promptCapabilities), and the failure is remembered: a second initialize does not start
// the agent again.
func TestInitializeFallsBackWhenProbeFails(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	script := filepath.Join(dir, "broken-agent")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho started >> "+count+"\necho 'no credentials' >&2\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	e := newEnvCfg(t, Options{Version: "9.9.9"}, sessions.Config{}, agents.Spec{Name: "broken", Kind: agents.KindACP, Command: script})
	for i := range 2 {
		init := e.dial("/acp/broken").initialize()
		if info := init["agentInfo"].(map[string]any); info["name"] != "acp-gateway" || info["version"] != "9.9.9" {
			t.Errorf("initialize %d: agentInfo = %v, want the gateway's", i, info)
		}
		caps := init["agentCapabilities"].(map[string]any)
		if p, _ := caps["promptCapabilities"].(map[string]any); p == nil || len(p) != 0 || caps["loadSession"] != true {
			t.Errorf("initialize %d: agentCapabilities = %v", i, caps)
		}
	}
	starts, err := os.ReadFile(count)
	if err != nil || strings.Count(string(starts), "started") != 1 {
		t.Errorf("the broken agent was started %q times (%v), want once", starts, err)
	}
	if listed, _ := json.Marshal(e.reg.Agents()); strings.Contains(string(listed), "probedAt") {
		t.Errorf("a failed probe is listed as known: %s", listed)
	}
}

// TestSessionStartRefreshesAgentInfo: a session started elsewhere (REST goes through Registry.Create) records
// the agent's answer, so `/acp` reports it after that session is gone without starting the agent again.
func TestSessionStartRefreshesAgentInfo(t *testing.T) {
	spec, pids := richAgent(t, "rich")
	e := newEnvCfg(t, Options{}, sessions.Config{}, spec)
	s, err := e.reg.Create(t.Context(), sessions.CreateOptions{Agent: "rich"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close("test")
	init := e.dial("/acp/rich").initialize()
	if info := init["agentInfo"].(map[string]any); info["name"] != "rich" {
		t.Errorf("agentInfo = %v, want the agent's from its closed session", info)
	}
	if p := init["agentCapabilities"].(map[string]any)["promptCapabilities"].(map[string]any); p["image"] != true {
		t.Errorf("promptCapabilities = %v", p)
	}
	if n := len(recordedPids(t, pids)); n != 2 {
		t.Errorf("%d processes started, want only the session's agent and its child (no probe)", n)
	}
}

// TestProbeRepeatedWhenAgentChanges: an upgraded agent (its executable changed on disk) is probed again and
// its new answer reported.
func TestProbeRepeatedWhenAgentChanges(t *testing.T) {
	bin := testAgentBinary(t)
	script := filepath.Join(t.TempDir(), "agent")
	write := func(name string) {
		if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+bin+" -init "+name+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write("v1")
	e := newEnvCfg(t, Options{}, sessions.Config{}, agents.Spec{Name: "upgraded", Kind: agents.KindACP, Command: script})
	if info := e.dial("/acp/upgraded").initialize()["agentInfo"].(map[string]any); info["name"] != "v1" {
		t.Fatalf("agentInfo = %v, want v1", info)
	}
	write("version2") // another size, so the change shows even within the file system's time resolution
	if info := e.dial("/acp/upgraded").initialize()["agentInfo"].(map[string]any); info["name"] != "version2" {
		t.Fatalf("agentInfo after the upgrade = %v, want version2", info)
	}
}

//go:build linux

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestAgentsReportProbedInitialize: before any session exists, GET /v1/agents reports each agent's own
// initialize answer (the built-in demo agent's and a real stdio agent's), `/acp/{agent}` initialize reports the
// same promptCapabilities without starting the agent again, and the probe leaves no process running.
func TestAgentsReportProbedInitialize(t *testing.T) {
	t.Parallel()
	// Inside the workdir, where the probe runs: a confined agent writes nowhere else.
	wd := t.TempDir()
	pids := filepath.Join(wd, "pids")
	if err := os.Mkdir(pids, 0o700); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--workdir", wd, "--agent", "rich="+testAgentBinary(t)+" -init rich -init-child -pid-dir "+pids)
	var list struct {
		Agents []struct {
			Name         string
			Info         map[string]any
			Capabilities struct{ PromptCapabilities map[string]any }
			AuthMethods  []map[string]any
			ProbedAt     time.Time
		}
	}
	if code := g.do("GET", "/v1/agents", nil, &list); code != http.StatusOK || len(list.Agents) != 2 {
		t.Fatalf("GET /v1/agents: %d %+v", code, list)
	}
	demo, rich := list.Agents[0], list.Agents[1]
	if demo.Info["name"] != "demo" || demo.Capabilities.PromptCapabilities["embeddedContext"] != true || demo.ProbedAt.IsZero() {
		t.Errorf("demo = %+v, want the demo agent's own answer", demo)
	}
	if rich.Info["title"] != "Test agent rich" || rich.Capabilities.PromptCapabilities["image"] != true ||
		len(rich.AuthMethods) != 1 || rich.AuthMethods[0]["id"] != "key-rich" || rich.ProbedAt.IsZero() {
		t.Errorf("rich = %+v, want the agent's own answer", rich)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, g.wsURL("/acp/rich"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(acpInitialize)); err != nil {
		t.Fatal(err)
	}
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		Result struct {
			AgentCapabilities struct {
				LoadSession        bool
				PromptCapabilities map[string]any
			}
			AgentInfo map[string]any
		}
	}
	if err := json.Unmarshal(data, &init); err != nil {
		t.Fatal(err)
	}
	if r := init.Result; !r.AgentCapabilities.LoadSession || r.AgentCapabilities.PromptCapabilities["image"] != true ||
		r.AgentCapabilities.PromptCapabilities["audio"] != true || r.AgentInfo["name"] != "rich" {
		t.Errorf("/acp/rich initialize = %s", data)
	}

	entries, err := os.ReadDir(pids)
	if err != nil || len(entries) != 2 {
		t.Fatalf("the agent was started with %d processes (%v), want one probe: the agent and its child", len(entries), err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, e := range entries {
		pid, _ := strconv.Atoi(e.Name())
		for processRunning(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("probed process %d (or its group) still running", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// processRunning reports whether pid, or a process of the group pid leads, is still running (a zombie is not).
func processRunning(pid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // state ppid pgrp …
		if len(f) > 2 && f[0] != "Z" && (e.Name() == itoa(pid) || f[2] == itoa(pid)) {
			return true
		}
	}
	return false
}

// TestAgentsListDoesNotWaitForSilentAgent: an agent that never answers initialize does not hold GET
// /v1/agents for the whole start timeout: the listing answers with what is known (the demo agent's answer;
// nothing yet for the silent one) while its probe goes on.
func TestAgentsListDoesNotWaitForSilentAgent(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--agent", "silent=sleep 1000", "--start-timeout", "10m")
	done := make(chan int, 1)
	var list struct {
		Agents []struct {
			Name string
			Info map[string]any
		}
	}
	go func() { done <- g.do("GET", "/v1/agents", nil, &list) }()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Fatalf("GET /v1/agents: %d", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("GET /v1/agents waited on an agent that never answers initialize")
	}
	for _, a := range list.Agents {
		if a.Name == "silent" && a.Info != nil {
			t.Fatalf("the silent agent has an answer: %v", a.Info)
		}
	}
}

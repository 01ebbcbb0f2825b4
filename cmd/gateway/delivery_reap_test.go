package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDeliveryDoubleForkedGrandchildKilled: the usual daemon double fork — a middle process starts a setsid
// process and exits — re-parents it to the gateway (a child subreaper) before the gateway can see it below
// the agent. It carries the agent's environment marker, so closing the session still kills and reaps it.
func TestDeliveryDoubleForkedGrandchildKilled(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "doublefork")
	s := g.createSession(nil)
	var res struct{ StopReason, Text string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"fork"}`, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	pid := escapedPidIn(t, res.Text)
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("close: %d", code)
	}
	waitPidGone(t, pid, "the agent's double-forked grandchild still exists after the session closed")
}

// TestDeliveryEventsAgentGrandchildKilled: the same double fork by a native-dialect agent: closing the
// session kills and reaps the grandchild too.
func TestDeliveryEventsAgentGrandchildKilled(t *testing.T) {
	t.Parallel()
	g := eventsTestAgentGateway(t, "events-escape")
	s := g.createSession(nil)
	var res struct{ StopReason, Text string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"fork"}`, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	pid := escapedPidIn(t, res.Text)
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("close: %d", code)
	}
	waitPidGone(t, pid, "the events agent's double-forked grandchild still exists after the session closed")
}

// TestDeliveryEventsAgentStopsReadingStdin: a native-dialect agent that never reads its stdin cannot hang a
// prompt: the write fails after --agent-write-timeout (the error names that value, so the flag reached the
// events adapter), the process is killed and the waiting REST call gets 502 turn_failed saying why.
func TestDeliveryEventsAgentStopsReadingStdin(t *testing.T) {
	t.Parallel()
	g := eventsTestAgentGateway(t, "events-deaf", "--agent-write-timeout", "300ms")
	s := g.createSession(nil)
	body, _ := json.Marshal(map[string]string{"text": strings.Repeat("m", 900<<10)}) // more than the pipe holds
	type res struct {
		code int
		body []byte
	}
	done := make(chan res, 1)
	go func() {
		code, b, _ := g.httpDo(context.Background(), "POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", string(body), nil)
		done <- res{code, b}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a prompt to an events agent that stopped reading its stdin hung")
	}
	if r.code != http.StatusBadGateway || !strings.Contains(string(r.body), "turn_failed") ||
		!strings.Contains(string(r.body), "stopped reading its input") || !strings.Contains(string(r.body), "within 300ms") {
		t.Fatalf("waiting prompt: %d %s", r.code, r.body)
	}
	t.Logf("answer: %s", r.body)
}

// eventsTestAgentGateway starts a gateway whose default agent "ev" is internal/testagent in a native-dialect
// mode, configured through an agents file.
func eventsTestAgentGateway(t *testing.T, mode string, flags ...string) *gateway {
	t.Helper()
	file := filepath.Join(t.TempDir(), "agents.json")
	cfg, _ := json.Marshal(map[string]any{"agent_servers": map[string]any{"ev": map[string]any{
		"command": testAgentBinary(t), "args": []string{"-mode", mode}, "kind": "events",
	}}})
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return startGateway(t, append([]string{"--agents", file, "--default-agent", "ev"}, flags...)...)
}

func escapedPidIn(t *testing.T, text string) int {
	t.Helper()
	m := regexp.MustCompile(`escaped (\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no escaped pid in %q", text)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("escaped process %d not running: %v", pid, err)
	}
	return pid
}

// waitPidGone waits (bounded) until pid no longer exists — killed and reaped — and kills it on failure so
// the test leaves nothing behind.
func waitPidGone(t *testing.T, pid int, msg string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s: pid %d (kill 0: %v)", msg, pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestAgentStartFailures: an agent that never answers initialize, and one that cannot be started, give the
// caller a clear 502 within the start deadline, and leave no session behind.
func TestAgentStartFailures(t *testing.T) {
	g := startGateway(t, "--agent", "hang=sleep 600", "--agent", "missing=/nonexistent/agent-binary", "--start-timeout", "300ms")
	for _, c := range []struct{ agent, code, detail string }{
		{"hang", "agent_error", "did not answer within 300ms"},
		{"missing", "agent_start_failed", `agent "missing" could not be started`},
	} {
		var p struct{ Code, Detail string }
		if code := g.do("POST", "/v1/sessions", map[string]string{"agent": c.agent}, &p); code != http.StatusBadGateway || p.Code != c.code || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("%s: %d %+v", c.agent, code, p)
		}
	}
	var list struct{ Sessions []sessionJSON }
	g.do("GET", "/v1/sessions", nil, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("failed starts left sessions: %+v", list.Sessions)
	}
}

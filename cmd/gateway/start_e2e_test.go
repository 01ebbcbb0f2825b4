package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestAgentStartFailures: an agent that never answers initialize gives the caller a clear 502 within the start
// deadline, one whose binary is missing a clear 503 agent_unavailable at once, and neither leaves a session.
func TestAgentStartFailures(t *testing.T) {
	g := startGateway(t, "--agent", "hang=sleep 600", "--agent", "missing=/nonexistent/agent-binary", "--start-timeout", "300ms")
	for _, c := range []struct {
		agent  string
		status int
		code   string
		detail string
	}{
		{"hang", http.StatusBadGateway, "agent_error", "did not answer within 300ms"},
		{"missing", http.StatusServiceUnavailable, "agent_unavailable", `agent "missing": its command was not found`},
	} {
		var p struct{ Code, Detail string }
		if code := g.do("POST", "/v1/sessions", map[string]string{"agent": c.agent}, &p); code != c.status || p.Code != c.code || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("%s: %d %+v", c.agent, code, p)
		}
	}
	var list struct{ Sessions []sessionJSON }
	g.do("GET", "/v1/sessions", nil, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("failed starts left sessions: %+v", list.Sessions)
	}
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestAgentAuthFailedIsAnAgentError: an agent that refuses the `authenticate` method the operator configured
// (here with -32602, as an agent answers an unknown method) fails session creation with 502 agent_auth_failed,
// never a client 400, and leaves no session behind.
func TestAgentAuthFailedIsAnAgentError(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "agents.json")
	cfg := map[string]any{"agent_servers": map[string]any{
		"ta": map[string]any{"command": testAgentBinary(t), "args": []string{"-mode", "perms"}, "authenticate": "no-such-method"},
	}}
	raw, _ := json.Marshal(cfg)
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--agents", file)
	var p struct{ Code, Detail string }
	if code := g.do("POST", "/v1/sessions", map[string]string{"agent": "ta"}, &p); code != http.StatusBadGateway || p.Code != "agent_auth_failed" {
		t.Fatalf("create with a refused authenticate: %d %+v, want 502 agent_auth_failed", code, p)
	}
	if !strings.Contains(p.Detail, "no-such-method") {
		t.Fatalf("detail %q does not name the method", p.Detail)
	}
	var list struct{ Sessions []sessionJSON }
	if g.do("GET", "/v1/sessions", nil, &list); len(list.Sessions) != 0 {
		t.Fatalf("a failed start left sessions: %+v", list.Sessions)
	}
}

// TestUpgradeRefusalsAreProblems: what the stream routes refuse before the upgrade is problem+json with a
// stable code, like every REST error (the contract check of the harness also holds them to openapi.yaml).
func TestUpgradeRefusalsAreProblems(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	ws := strings.Replace(g.base, "http", "ws", 1)
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{"/acp/no-such-agent", http.StatusNotFound, "unknown_agent"},
		{"/v1/sessions/" + s.ID + "/ws?after=-1", http.StatusBadRequest, "bad_request"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, resp, err := websocket.Dial(ctx, ws+c.path, nil)
		cancel()
		if err == nil || resp == nil {
			t.Fatalf("%s: upgraded (err %v)", c.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		var p struct{ Code string }
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(body, &p) != nil || p.Code != c.code {
			t.Fatalf("%s: %d %s %q, want %d problem+json %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, c.code)
		}
	}
}

package acpws

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// MCP servers on session/load and session/resume: the test agent in mcp mode reports, on each prompt, the
// servers session/new, session/load or session/resume gave it (header values as hashes).

const secretAttachHeader = "attach-header-secret-4d2e19"

// mcpAgent is the test agent in mcp mode, advertising mcpCapabilities.http, with one configured http server.
func mcpAgent(t *testing.T, name string, flags ...string) agents.Spec {
	return agents.Spec{Name: name, Kind: agents.KindACP, Command: testAgentBinary(t),
		Args:       append([]string{"-mode", "mcp", "-mcp-caps", "http"}, flags...),
		MCPServers: []agents.MCPServer{{Type: agents.MCPHTTP, Name: "op-http", URL: "https://mcp.example/op"}}}
}

func httpMCP(name string) map[string]any {
	return map[string]any{"type": "http", "name": name, "url": "http://127.0.0.1:9/" + name,
		"headers": []any{map[string]string{"name": "X-Key", "value": secretAttachHeader}}}
}

// reportedMCP prompts and returns the names of the servers the agent reports, in order, failing when a
// report carries a header value rather than its hash.
func reportedMCP(t *testing.T, cl *client, sid string) string {
	t.Helper()
	before := cl.mustResult("session/prompt", textPrompt(sid, "report"), nil)
	for _, m := range before {
		var p struct {
			Update struct {
				SessionUpdate string
				Content       struct{ Text string }
			}
		}
		_ = json.Unmarshal(m.Params, &p)
		if m.Method != "session/update" || p.Update.SessionUpdate != "agent_message_chunk" {
			continue
		}
		var list []struct {
			Name    string
			Headers map[string]string
		}
		if err := json.Unmarshal([]byte(p.Update.Content.Text), &list); err != nil {
			t.Fatalf("report %q: %v", p.Update.Content.Text, err)
		}
		var names []string
		for _, s := range list {
			if s.Name != "op-http" && (len(s.Headers["X-Key"]) != 12 || strings.Contains(s.Headers["X-Key"], "secret")) {
				t.Fatalf("server %s reported with headers %v", s.Name, s.Headers)
			}
			names = append(names, s.Name)
		}
		return strings.Join(names, ",")
	}
	t.Fatalf("no report among %v", kinds(before))
	return ""
}

// attachErr sends session/load or session/resume and returns its error (nil when it succeeded).
func attachErr(t *testing.T, cl *client, method, sid, cwd string, servers []any) *struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
} {
	t.Helper()
	_, resp := cl.call(method, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": servers})
	if resp.Error != nil && strings.Contains(string(resp.raw), secretAttachHeader) {
		t.Fatalf("%s answer holds a header value: %s", method, resp.raw)
	}
	return resp.Error
}

// TestMCPServersChangeWhileDetached: the re-attach of a detached session passes the configured and client
// servers to the agent's session/load; a session/load while detached replaces the client's servers, checked
// as on session/new; while the agent runs, a load naming other servers is -32602 saying when they can change.
func TestMCPServersChangeWhileDetached(t *testing.T) {
	e := newEnvCfg(t, Options{}, sessions.Config{}, mcpAgent(t, "mcpta"))
	cl := e.dial("/acp/mcpta")
	cl.initialize()
	var nr struct {
		SessionID string `json:"sessionId"`
	}
	cl.mustResult("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{httpMCP("client-a")}}, &nr)
	sid := nr.SessionID
	if got := reportedMCP(t, cl, sid); got != "op-http,client-a" {
		t.Fatalf("after session/new: %q", got)
	}

	// Live: the session's own servers may be repeated, others are refused.
	if err := attachErr(t, cl, "session/load", sid, e.dir, []any{httpMCP("client-a")}); err != nil {
		t.Fatalf("live load repeating the session's server: %+v", err)
	}
	if err := attachErr(t, cl, "session/load", sid, e.dir, []any{httpMCP("client-b")}); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "only change while the session is detached") {
		t.Fatalf("live load naming another server: %+v", err)
	}

	// Detached, nothing named: the re-attach passes the servers the session has.
	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	if got := reportedMCP(t, cl, sid); got != "op-http,client-a" {
		t.Fatalf("after a re-attach: %q, want the configured and the client's servers", got)
	}

	// Detached: refused as on session/new, and a refusal changes nothing.
	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	stdio := map[string]any{"name": "client-stdio", "command": "sh", "args": []any{}, "env": []any{map[string]string{"name": "K", "value": secretAttachHeader}}}
	sse := map[string]any{"type": "sse", "name": "client-sse", "url": "http://127.0.0.1:9/sse", "headers": []any{}}
	taken := map[string]any{"type": "http", "name": "op-http", "url": "http://127.0.0.1:9/other", "headers": []any{}}
	for what, servers := range map[string][]any{"stdio": {stdio}, "sse": {sse}, "a configured name": {httpMCP("client-b"), taken}} {
		if err := attachErr(t, cl, "session/load", sid, e.dir, servers); err == nil || err.Code != -32602 {
			t.Fatalf("detached load with %s: %+v", what, err)
		}
	}
	// Replaced: the configured server repeated as it is, and a new one; client-a is gone.
	opHTTP := map[string]any{"type": "http", "name": "op-http", "url": "https://mcp.example/op", "headers": []any{}}
	if err := attachErr(t, cl, "session/load", sid, e.dir, []any{opHTTP, httpMCP("client-b")}); err != nil {
		t.Fatalf("detached load with new servers: %+v", err)
	}
	if got := reportedMCP(t, cl, sid); got != "op-http,client-b" {
		t.Fatalf("after a load that replaced the client's servers: %q", got)
	}

	// Detached: a load without mcpServers keeps the client's servers, an empty list removes them.
	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	cl.mustResult("session/load", map[string]any{"sessionId": sid, "cwd": e.dir}, nil)
	if got := reportedMCP(t, cl, sid); got != "op-http,client-b" {
		t.Fatalf("after a load without mcpServers: %q", got)
	}
	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	if err := attachErr(t, cl, "session/load", sid, e.dir, []any{}); err != nil {
		t.Fatalf("detached load with no servers: %+v", err)
	}
	if got := reportedMCP(t, cl, sid); got != "op-http" {
		t.Fatalf("after a load with an empty list: %q", got)
	}
}

// TestMCPServersOnResumeWhileDetached: the same through session/resume, to an agent that can only resume.
func TestMCPServersOnResumeWhileDetached(t *testing.T) {
	e := newEnvCfg(t, Options{}, sessions.Config{}, mcpAgent(t, "mcpres", "-resume-only"))
	cl := e.dial("/acp/mcpres")
	cl.initialize()
	sid := cl.newSession(e.dir)
	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	if err := attachErr(t, cl, "session/resume", sid, e.dir, []any{httpMCP("client-c")}); err != nil {
		t.Fatalf("detached resume with a server: %+v", err)
	}
	if got := reportedMCP(t, cl, sid); got != "op-http,client-c" {
		t.Fatalf("after the re-attach by session/resume: %q", got)
	}
	if err := attachErr(t, cl, "session/resume", sid, e.dir, []any{httpMCP("client-d")}); err == nil || err.Code != -32602 {
		t.Fatalf("live resume naming another server: %+v", err)
	}
}

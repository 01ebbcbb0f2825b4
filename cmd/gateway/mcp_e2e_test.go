package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// MCP servers reach agents on session/new: the agents file's and the client's. The test agent (mcp mode)
// reports what it got (env and header values only as hashes), and starts its stdio servers (the test agent
// again, as a stdio MCP server) to list their tools, which name a hash of each MCP_ variable they were given.

// Secrets the operator and clients put into MCP env and headers. None may appear in any response, frame or
// log line.
const (
	secretOperatorEnv    = "op-env-secret-5b1c9d"
	secretOperatorHeader = "op-header-secret-7e2f11"
	secretClientHeader   = "client-header-secret-93aa04"
	secretClientEnv      = "client-env-secret-c0ffee"
)

var mcpSecrets = []string{secretOperatorEnv, secretOperatorHeader, secretClientHeader, secretClientEnv}

func hash12(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:])[:12]
}

type mcpReport struct {
	Name, Type, Command, URL string
	Env, Headers             map[string]string
	Tools                    []string
	Error                    string
}

// mcpGateway starts a gateway whose default agent "ta" is the test agent in mcp mode, advertising the given
// mcpCapabilities, with MCP servers in its agents file.
func mcpGateway(t *testing.T, caps string, flags ...string) *gateway {
	t.Helper()
	bin := testAgentBinary(t)
	file := filepath.Join(t.TempDir(), "agents.json")
	cfg := map[string]any{"agent_servers": map[string]any{"ta": map[string]any{
		"command": bin, "args": []string{"-mode", "mcp", "-mcp-caps", caps},
		"mcpServers": []any{
			map[string]any{"name": "op-stdio", "command": bin, "args": []string{"-mcp-server"},
				"env": []any{map[string]string{"name": "MCP_TOKEN", "value": secretOperatorEnv}}},
			map[string]any{"type": "http", "name": "op-http", "url": "https://mcp.example/op",
				"headers": []any{map[string]string{"name": "Authorization", "value": "Bearer " + secretOperatorHeader}}},
		},
	}}}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return startGateway(t, append([]string{"--agents", file, "--default-agent", "ta", "--log-level", "debug"}, flags...)...)
}

// mcpRecorder keeps every REST response body and frame a test saw, to check no secret is in any.
type mcpRecorder struct {
	t    *testing.T
	g    *gateway
	seen []string
}

func (r *mcpRecorder) do(method, path string, body any) (int, []byte) {
	r.t.Helper()
	code, data, err := r.g.httpDo(context.Background(), method, path, body, nil)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	r.seen = append(r.seen, string(data))
	return code, data
}

func (r *mcpRecorder) problemCode(method, path string, body any, status int) string {
	r.t.Helper()
	code, data := r.do(method, path, body)
	var p struct{ Code, Detail string }
	_ = json.Unmarshal(data, &p)
	if code != status {
		r.t.Fatalf("%s %s: %d %s, want %d", method, path, code, data, status)
	}
	return p.Code
}

// reports runs a turn and returns what the agent reported.
func (r *mcpRecorder) reports(sid string) map[string]mcpReport {
	r.t.Helper()
	code, data := r.do("POST", "/v1/sessions/"+sid+"/prompt?wait=true", map[string]string{"text": "report"})
	var res struct{ StopReason, Text string }
	if json.Unmarshal(data, &res) != nil || code != http.StatusOK || res.StopReason != "end_turn" {
		r.t.Fatalf("prompt: %d %s", code, data)
	}
	var list []mcpReport
	if err := json.Unmarshal([]byte(res.Text), &list); err != nil {
		r.t.Fatalf("report %q: %v", res.Text, err)
	}
	out := map[string]mcpReport{}
	var order []string
	for _, m := range list {
		out[m.Name] = m
		order = append(order, m.Name)
	}
	out["_order"] = mcpReport{Name: strings.Join(order, ",")}
	return out
}

// noSecrets fails if any secret is in anything the test saw, the session's whole log, or the gateway's log.
func (r *mcpRecorder) noSecrets(sessionIDs ...string) {
	r.t.Helper()
	all := append([]string(nil), r.seen...)
	for _, id := range sessionIDs {
		code, data := r.do("GET", "/v1/sessions/"+id, nil)
		if code == http.StatusOK {
			var s sessionJSON
			_ = json.Unmarshal(data, &s)
			for _, f := range r.g.fullLogWS(r.t, id, s.Epoch) {
				all = append(all, string(f.Raw))
			}
		}
	}
	_, agents := r.do("GET", "/v1/agents", nil)
	all = append(all, string(agents), r.g.logs.String())
	for _, s := range mcpSecrets {
		for _, text := range all {
			if strings.Contains(text, s) || strings.Contains(text, strings.TrimSuffix(s, s[len(s)-6:])) {
				r.t.Fatalf("secret %q leaked in %q", s, text)
			}
		}
	}
}

func TestMCPServersReachAgent(t *testing.T) {
	g := mcpGateway(t, "http")
	r := &mcpRecorder{t: t, g: g}
	clientHTTP := map[string]any{"type": "http", "name": "client-http", "url": "http://127.0.0.1:9/mcp",
		"headers": []any{map[string]string{"name": "X-Key", "value": secretClientHeader}}}
	code, data := r.do("POST", "/v1/sessions", map[string]any{"mcpServers": []any{clientHTTP}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, data)
	}
	var s sessionJSON
	_ = json.Unmarshal(data, &s)
	rep := r.reports(s.ID)
	if rep["_order"].Name != "op-stdio,op-http,client-http" {
		t.Fatalf("servers %q, want the configured ones, then the client's", rep["_order"].Name)
	}
	st := rep["op-stdio"]
	if st.Type != "stdio" || st.Env["MCP_TOKEN"] != hash12(secretOperatorEnv) || st.Error != "" {
		t.Fatalf("stdio server: %+v", st)
	}
	// The agent started the configured stdio server with its env and spoke MCP to it.
	if want := "echo,env_MCP_TOKEN_" + hash12(secretOperatorEnv); strings.Join(st.Tools, ",") != want {
		t.Fatalf("tools/list of the stdio server: %v, want %s", st.Tools, want)
	}
	if h := rep["op-http"]; h.Type != "http" || h.URL != "https://mcp.example/op" || h.Headers["Authorization"] != hash12("Bearer "+secretOperatorHeader) {
		t.Fatalf("configured http server: %+v", h)
	}
	if h := rep["client-http"]; h.Type != "http" || h.Headers["X-Key"] != hash12(secretClientHeader) {
		t.Fatalf("client http server: %+v", h)
	}

	// Refused: a client's stdio server (no --allow-client-mcp-stdio), a name the agents file uses, a transport
	// the agent does not advertise, a malformed entry.
	clientStdio := map[string]any{"name": "client-stdio", "command": "sh", "args": []string{"-c", "id"},
		"env": []any{map[string]string{"name": "MCP_X", "value": secretClientEnv}}}
	if c := r.problemCode("POST", "/v1/sessions", map[string]any{"mcpServers": []any{clientStdio}}, 422); c != "mcp_stdio_forbidden" {
		t.Fatalf("client stdio: code %q", c)
	}
	taken := map[string]any{"type": "http", "name": "op-http", "url": "http://127.0.0.1:9/x"}
	if c := r.problemCode("POST", "/v1/sessions", map[string]any{"mcpServers": []any{taken}}, 422); c != "mcp_name_conflict" {
		t.Fatalf("name collision: code %q", c)
	}
	sse := map[string]any{"type": "sse", "name": "client-sse", "url": "http://127.0.0.1:9/sse",
		"headers": []any{map[string]string{"name": "X-Key", "value": secretClientHeader}}}
	if c := r.problemCode("POST", "/v1/sessions", map[string]any{"mcpServers": []any{sse}}, 422); c != "mcp_unsupported" {
		t.Fatalf("sse to an agent without mcpCapabilities.sse: code %q", c)
	}
	for _, bad := range []any{
		"not an array",
		[]any{map[string]any{"type": "ws", "name": "x", "url": "ws://x"}},
		[]any{map[string]any{"name": "x"}},
		[]any{map[string]any{"type": "http", "name": "x", "url": "http://x", "headers": []any{map[string]any{"name": "K", "value": 1}}}},
		[]any{clientHTTP, clientHTTP},
	} {
		if c := r.problemCode("POST", "/v1/sessions", map[string]any{"mcpServers": bad}, 400); c != "bad_request" {
			t.Fatalf("malformed %v: code %q", bad, c)
		}
	}
	// An agent that refuses its MCP configuration and quotes it (error data, stderr): the 502 and the log
	// show it without the values.
	refused := map[string]any{"type": "http", "name": "refuse-me", "url": "http://127.0.0.1:9/mcp",
		"headers": []any{map[string]string{"name": "X-Key", "value": secretClientHeader}}}
	code, data = r.do("POST", "/v1/sessions", map[string]any{"mcpServers": []any{refused}})
	if code != http.StatusBadGateway || !strings.Contains(string(data), "[REDACTED]") || !strings.Contains(string(data), "refuse-me") {
		t.Fatalf("agent refusing its MCP configuration: %d %s", code, data)
	}
	// It also printed it on stdout, and stderr: logged (the gateway logs both), scrubbed.
	if logs := g.logs.String(); !strings.Contains(logs, "agent stdout line is not JSON-RPC") || !strings.Contains(logs, `line="testagent: bad MCP configuration`) {
		t.Fatalf("the agent's stdout and stderr lines were not logged:\n%s", logs)
	}
	r.noSecrets(s.ID)
}

// TestMCPClientStdioAllowed: with --allow-client-mcp-stdio a client's stdio server reaches the agent, which
// starts it with the client's env.
func TestMCPClientStdioAllowed(t *testing.T) {
	g := mcpGateway(t, "", "--allow-client-mcp-stdio")
	r := &mcpRecorder{t: t, g: g}
	stdio := map[string]any{"name": "client-stdio", "command": testAgentBinary(t), "args": []string{"-mcp-server"},
		"env": []any{map[string]string{"name": "MCP_CLIENT", "value": secretClientEnv}}}
	code, data := r.do("POST", "/v1/sessions", map[string]any{"mcpServers": []any{stdio}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, data)
	}
	var s sessionJSON
	_ = json.Unmarshal(data, &s)
	rep := r.reports(s.ID)
	if want := "echo,env_MCP_CLIENT_" + hash12(secretClientEnv); strings.Join(rep["client-stdio"].Tools, ",") != want {
		t.Fatalf("client stdio server: %+v, want tools %s", rep["client-stdio"], want)
	}
	r.noSecrets(s.ID)
}

// TestMCPOverACP: /acp session/new takes mcpServers by the same rules (-32602 when refused); session/load
// accepts the servers the session has and refuses others.
func TestMCPOverACP(t *testing.T) {
	g := mcpGateway(t, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, g.wsURL("/acp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var seen []string
	call := func(id int, method string, params any) (json.RawMessage, *struct {
		Code    int
		Message string
	}) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, string(data))
			var m struct {
				ID     *int
				Result json.RawMessage
				Error  *struct {
					Code    int
					Message string
				}
			}
			_ = json.Unmarshal(data, &m)
			if m.ID != nil && *m.ID == id {
				return m.Result, m.Error
			}
		}
	}
	res, _ := call(1, "initialize", map[string]any{"protocolVersion": 1})
	var init struct {
		AgentCapabilities struct{ McpCapabilities struct{ HTTP, SSE bool } }
	}
	_ = json.Unmarshal(res, &init)
	if !init.AgentCapabilities.McpCapabilities.HTTP || init.AgentCapabilities.McpCapabilities.SSE {
		t.Fatalf("initialize: mcpCapabilities %+v, want the agent's (http only)", init.AgentCapabilities.McpCapabilities)
	}
	workdir := strings.TrimSuffix(mustWorkdir(t, g), "/")
	stdio := map[string]any{"name": "client-stdio", "command": "sh", "args": []string{},
		"env": []any{map[string]string{"name": "MCP_X", "value": secretClientEnv}}}
	if _, e := call(2, "session/new", map[string]any{"cwd": workdir, "mcpServers": []any{stdio}}); e == nil || e.Code != -32602 || !strings.Contains(e.Message, "stdio") {
		t.Fatalf("stdio over /acp: %+v", e)
	}
	taken := map[string]any{"type": "http", "name": "op-stdio", "url": "http://127.0.0.1:9/x", "headers": []any{}}
	if _, e := call(3, "session/new", map[string]any{"cwd": workdir, "mcpServers": []any{taken}}); e == nil || e.Code != -32602 {
		t.Fatalf("name collision over /acp: %+v", e)
	}
	mine := map[string]any{"type": "http", "name": "client-http", "url": "http://127.0.0.1:9/mcp",
		"headers": []any{map[string]string{"name": "X-Key", "value": secretClientHeader}}}
	res, e := call(4, "session/new", map[string]any{"cwd": workdir, "mcpServers": []any{mine}})
	if e != nil {
		t.Fatalf("session/new: %+v", e)
	}
	var nr struct{ SessionID string }
	_ = json.Unmarshal(res, &nr)
	if _, e := call(5, "session/load", map[string]any{"sessionId": nr.SessionID, "cwd": workdir, "mcpServers": []any{mine}}); e != nil {
		t.Fatalf("session/load with the session's own servers: %+v", e)
	}
	other := map[string]any{"type": "http", "name": "other", "url": "http://127.0.0.1:9/other", "headers": []any{}}
	if _, e := call(6, "session/load", map[string]any{"sessionId": nr.SessionID, "cwd": workdir, "mcpServers": []any{other}}); e == nil || e.Code != -32602 {
		t.Fatalf("session/load adding a server: %+v", e)
	}
	if _, e := call(7, "session/resume", map[string]any{"sessionId": nr.SessionID, "cwd": workdir, "mcpServers": []any{stdio}}); e == nil || e.Code != -32602 {
		t.Fatalf("session/resume with a stdio server: %+v", e)
	}
	r := &mcpRecorder{t: t, g: g, seen: seen}
	if h := r.reports(nr.SessionID)["client-http"]; h.Headers["X-Key"] != hash12(secretClientHeader) {
		t.Fatalf("client http server over /acp: %+v", h)
	}
	r.noSecrets(nr.SessionID)
}

// mustWorkdir is the gateway's --workdir, as the default cwd of a session shows it.
func mustWorkdir(t *testing.T, g *gateway) string {
	t.Helper()
	s := g.createSession(map[string]any{"agent": "demo"})
	g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil)
	if s.Cwd == "" {
		t.Fatalf("no cwd in %+v", s)
	}
	return s.Cwd
}

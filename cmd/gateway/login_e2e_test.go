package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test agent's -login key, and a wrong one a user might type: neither may show anywhere.
const (
	loginKey      = "tk-login-0123456789abcdef"
	loginWrongKey = "tk-wrong-fedcba9876543210"
)

// loginGateway runs a gateway with users ann, bob (users) and root (admin), a data dir, and two agents that
// demand a login (testagent -login): "ta" with per-principal logins and "tashared" with "login": {"shared": true}.
func loginGateway(t *testing.T) (g *gateway, dataDir, workdir string) {
	t.Helper()
	dataDir, workdir = t.TempDir(), t.TempDir()
	return loginGatewayOn(t, dataDir, workdir), dataDir, workdir
}

// loginGatewayOn is loginGateway on a given data dir and workdir (a restart).
func loginGatewayOn(t *testing.T, dataDir, workdir string) *gateway {
	t.Helper()
	bin := testAgentBinary(t)
	args := []string{"-mode", "echo", "-login", loginKey}
	cfg := map[string]any{"agent_servers": map[string]any{
		"ta":       map[string]any{"command": bin, "args": args},
		"tashared": map[string]any{"command": bin, "args": args, "login": map[string]any{"shared": true}},
	}}
	dir := t.TempDir()
	file := filepath.Join(dir, "agents.json")
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	g, _ := startWithUsers(t, "--agents", file, "--default-agent", "ta", "--data-dir", dataDir, "--workdir", workdir, "--log-level", "debug")
	return g
}

// loginRecorder keeps every response body a test saw, to check that no secret is in any.
type loginRecorder struct {
	t    *testing.T
	g    *gateway
	seen []string
}

func (r *loginRecorder) do(who, method, path string, body any) (int, string, string) {
	r.t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	code, pcode, data := r.g.request(method, path, raw, as(who))
	r.seen = append(r.seen, data)
	return code, pcode, data
}

// loginProblem is the 409 agent_login_required body.
type loginProblem struct {
	Status      int    `json:"status"`
	Code        string `json:"code"`
	Detail      string `json:"detail"`
	Agent       string `json:"agent"`
	AuthMethods []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
		Vars []struct {
			Name     string `json:"name"`
			Secret   *bool  `json:"secret"`
			Optional bool   `json:"optional"`
		} `json:"vars"`
	} `json:"authMethods"`
}

func (r *loginRecorder) wantLoginRequired(who, agent string) loginProblem {
	r.t.Helper()
	code, _, body := r.do(who, "POST", "/v1/sessions", map[string]any{"agent": agent})
	var p loginProblem
	_ = json.Unmarshal([]byte(body), &p)
	if code != http.StatusConflict || p.Code != "agent_login_required" || p.Agent != agent {
		r.t.Fatalf("create as %s: %d %s, want 409 agent_login_required", who, code, body)
	}
	return p
}

func (r *loginRecorder) create(who, agent string) string {
	r.t.Helper()
	code, _, body := r.do(who, "POST", "/v1/sessions", map[string]any{"agent": agent})
	var s sessionJSON
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &s) != nil {
		r.t.Fatalf("create as %s: %d %s\n%s", who, code, body, r.g.logs.String())
	}
	return s.ID
}

// TestAgentLoginEnvVar: an agent that answers auth_required makes session creation a 409 naming its auth
// methods (REST and /acp); ann's env-var login lets her create sessions and prompt, bob still gets 409, bad
// variables are 400s, logout forgets the key, and the key (right or wrong) is in no response, frame, log
// line, metric or byte of the data dir.
func TestAgentLoginEnvVar(t *testing.T) {
	g, dataDir, workdir := loginGateway(t)
	r := &loginRecorder{t: t, g: g}

	p := r.wantLoginRequired("ann", "ta")
	if len(p.AuthMethods) != 2 || p.AuthMethods[0].ID != "test-key" || p.AuthMethods[0].Type != "env_var" ||
		len(p.AuthMethods[0].Vars) != 2 || p.AuthMethods[0].Vars[0].Name != "TEST_API_KEY" || p.AuthMethods[1].ID != "agent-login" {
		t.Fatalf("authMethods %+v: want the agent's env_var and agent methods as it described them", p.AuthMethods)
	}

	// /acp session/new: the agent's -32000 with the same methods in its data.
	rc := dialACPAs(t, g, as("ann"))
	rep := rc.call("session/new", map[string]any{"cwd": workdir, "mcpServers": []any{}})
	if rep.Error == nil || rep.Error.Code != -32000 || !strings.Contains(string(rep.Error.Data), `"id":"test-key"`) || !strings.Contains(string(rep.Error.Data), `"agent_login_required"`) {
		t.Fatalf("/acp session/new: %+v, want -32000 with the authMethods in data", rep.Error)
	}
	r.seen = append(r.seen, string(rep.Error.Data), rep.Error.Message)

	code, _, body := r.do("ann", "GET", "/v1/agents/ta/login", nil)
	if code != http.StatusOK || !strings.Contains(body, `"satisfied":[]`) || !strings.Contains(body, `"logout":true`) || !strings.Contains(body, `"test-key"`) {
		t.Fatalf("GET login before: %d %s", code, body)
	}

	// Bad input: a stable 400 each, nothing kept.
	for _, c := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"methodId": "test-key", "vars": map[string]string{"TEST_API_KEY": loginKey, "OTHER": "x"}}, "invalid_login_vars"},
		{map[string]any{"methodId": "test-key", "vars": map[string]string{"TEST_REGION": "eu"}}, "invalid_login_vars"},
		{map[string]any{"methodId": "nope", "vars": map[string]string{"TEST_API_KEY": loginKey}}, "unknown_login_method"},
		{map[string]any{"methodId": "agent-login", "vars": map[string]string{"TEST_API_KEY": loginKey}}, "unknown_login_method"},
		{map[string]any{"vars": map[string]string{"TEST_API_KEY": loginKey}}, "bad_request"},
	} {
		if code, pcode, body := r.do("ann", "PUT", "/v1/agents/ta/login/env", c.body); code != http.StatusBadRequest || pcode != c.code {
			t.Errorf("PUT %v: %d %s, want 400 %s", c.body, code, body, c.code)
		}
	}
	if code, pcode, _ := r.do("ann", "PUT", "/v1/agents/nope/login/env", map[string]any{"methodId": "test-key"}); code != http.StatusBadRequest || pcode != "unknown_agent" {
		t.Errorf("PUT on an unknown agent: %d %s", code, pcode)
	}

	// A wrong key: kept, the agent still refuses and quotes it, the gateway shows it to nobody.
	if code, _, body := r.do("ann", "PUT", "/v1/agents/ta/login/env", map[string]any{"methodId": "test-key", "vars": map[string]string{"TEST_API_KEY": loginWrongKey}}); code != http.StatusOK {
		t.Fatalf("PUT wrong key: %d %s", code, body)
	}
	if p := r.wantLoginRequired("ann", "ta"); !strings.Contains(p.Detail, "[REDACTED]") {
		t.Errorf("detail %q: the agent quoted the wrong key; want it redacted", p.Detail)
	}

	code, _, body = r.do("ann", "PUT", "/v1/agents/ta/login/env", map[string]any{"methodId": "test-key", "vars": map[string]string{"TEST_API_KEY": loginKey, "TEST_REGION": "eu-test"}})
	if code != http.StatusOK || !strings.Contains(body, `"satisfied":["test-key"]`) || !strings.Contains(body, `"vars":["TEST_API_KEY","TEST_REGION"]`) {
		t.Fatalf("PUT key: %d %s", code, body)
	}
	sid := r.create("ann", "ta")
	code, _, body = r.do("ann", "POST", "/v1/sessions/"+sid+"/prompt?wait=true", map[string]string{"text": "hello"})
	if code != http.StatusOK || !strings.Contains(body, "end_turn") || !strings.Contains(body, "my key is [REDACTED]") {
		t.Fatalf("prompt after login: %d %s; want the turn's text with the key the agent quoted redacted", code, body)
	}
	if !strings.Contains(g.logs.String(), "logged in with key [REDACTED]") {
		t.Errorf("the agent's stderr line quoting its key is not in the log, redacted:\n%s", grepLines(g.logs.String(), "logged in"))
	}

	// Bob does not get ann's key, over REST or /acp.
	r.wantLoginRequired("bob", "ta")
	if rep := dialACPAs(t, g, as("bob")).call("session/new", map[string]any{"cwd": workdir, "mcpServers": []any{}}); rep.Error == nil || rep.Error.Code != -32000 {
		t.Fatalf("/acp session/new as bob: %+v, want -32000", rep)
	}
	if code, _, body := r.do("bob", "GET", "/v1/agents/ta/login", nil); code != http.StatusOK || !strings.Contains(body, `"satisfied":[]`) {
		t.Errorf("bob's login status: %d %s", code, body)
	}

	// Logout: the agent advertises it; the gateway sends it and forgets ann's key.
	code, _, body = r.do("ann", "DELETE", "/v1/agents/ta/login", nil)
	if code != http.StatusOK || !strings.Contains(body, `"agentLogout":true`) || !strings.Contains(body, `"forgotten":true`) {
		t.Fatalf("logout: %d %s", code, body)
	}
	r.wantLoginRequired("ann", "ta")
	for _, action := range []string{"agent_login_env", "agent_logout"} {
		if !strings.Contains(g.logs.String(), "audit=true action="+action+" principal=ann ") {
			t.Errorf("no audit line %s by ann:\n%s", action, grepLines(g.logs.String(), "audit"))
		}
	}

	// Everything seen, the session's whole log, the metrics, the gateway log and the data dir: no key.
	code, _, body = r.do("ann", "GET", "/v1/sessions/"+sid+"/events?after=0&limit=1000", nil)
	if code != http.StatusOK || !strings.Contains(body, "agent_message_chunk") {
		t.Fatalf("events: %d %s", code, body)
	}
	r.do("root", "GET", "/metrics", nil)
	r.do("ann", "GET", "/v1/sessions/"+sid, nil)
	r.do("ann", "GET", "/v1/agents", nil)
	g.stop() // the write-behind has flushed
	all := append(r.seen, g.logs.String())
	for _, secret := range []string{loginKey, loginWrongKey} {
		for _, text := range all {
			if strings.Contains(text, secret) {
				t.Fatalf("secret %q leaked in %q", secret, text)
			}
		}
		err := filepath.WalkDir(dataDir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("secret %q stored in %s", secret, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestAgentLoginAgentMethod: an agent method runs authenticate on a fresh agent process for the caller; the
// gateway remembers it and repeats it when that caller's next agent answers auth_required, so ann's
// sessions open and bob's still get 409. A method the agent does not offer is 400.
func TestAgentLoginAgentMethod(t *testing.T) {
	g, _, _ := loginGateway(t)
	r := &loginRecorder{t: t, g: g}
	if code, pcode, body := r.do("ann", "POST", "/v1/agents/ta/login/agent", map[string]string{"methodId": "test-key"}); code != http.StatusBadRequest || pcode != "unknown_login_method" {
		t.Fatalf("agent login with an env_var method: %d %s", code, body)
	}
	code, _, body := r.do("ann", "POST", "/v1/agents/ta/login/agent", map[string]string{"methodId": "agent-login"})
	if code != http.StatusOK || !strings.Contains(body, `"result":{}`) {
		t.Fatalf("agent login: %d %s", code, body)
	}
	if code, _, body := r.do("ann", "GET", "/v1/agents/ta/login", nil); code != http.StatusOK || !strings.Contains(body, `"satisfied":["agent-login"]`) {
		t.Fatalf("status after agent login: %d %s", code, body)
	}
	r.create("ann", "ta")
	r.wantLoginRequired("bob", "ta")
	if code, _, body := r.do("ann", "DELETE", "/v1/agents/ta/login", nil); code != http.StatusOK || !strings.Contains(body, `"forgotten":true`) {
		t.Fatalf("logout: %d %s", code, body)
	}
	r.wantLoginRequired("ann", "ta")
}

// TestAgentLoginShared: with "login": {"shared": true} one login serves every user, and only an admin sets
// or forgets it.
func TestAgentLoginShared(t *testing.T) {
	g, _, _ := loginGateway(t)
	r := &loginRecorder{t: t, g: g}
	put := map[string]any{"methodId": "test-key", "vars": map[string]string{"TEST_API_KEY": loginKey}}
	if code, pcode, body := r.do("ann", "PUT", "/v1/agents/tashared/login/env", put); code != http.StatusForbidden || pcode != "forbidden" {
		t.Fatalf("ann setting a shared login: %d %s, want 403", code, body)
	}
	if code, _, body := r.do("root", "PUT", "/v1/agents/tashared/login/env", put); code != http.StatusOK || !strings.Contains(body, `"shared":true`) {
		t.Fatalf("root setting the shared login: %d %s", code, body)
	}
	r.create("ann", "tashared")
	r.create("bob", "tashared")
	r.wantLoginRequired("bob", "ta") // the shared login is tashared's only
	if code, _, _ := r.do("bob", "DELETE", "/v1/agents/tashared/login", nil); code != http.StatusForbidden {
		t.Fatalf("bob forgetting the shared login: %d, want 403", code)
	}
}

// TestAgentLoginOverStreamableHTTP: /acp over Streamable HTTP answers session/new of an agent that wants a
// login with the agent's -32000 and the methods in its data, as the WebSocket does.
func TestAgentLoginOverStreamableHTTP(t *testing.T) {
	g, _, workdir := loginGateway(t)
	post := func(conn, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", g.base+"/acp", strings.NewReader(body))
		for k, v := range as("ann") {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		if conn != "" {
			req.Header.Set("Acp-Connection-Id", conn)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, body := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	conn := resp.Header.Get("Acp-Connection-Id")
	if resp.StatusCode != http.StatusOK || conn == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sreq, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/acp", nil)
	for k, v := range as("ann") {
		sreq.Header.Set(k, v)
	}
	sreq.Header.Set("Accept", "text/event-stream")
	sreq.Header.Set("Acp-Connection-Id", conn)
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	newReq, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": map[string]any{"cwd": workdir, "mcpServers": []any{}}})
	if resp, body := post(conn, string(newReq)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("session/new: %d %s", resp.StatusCode, body)
	}
	sc := bufio.NewScanner(stream.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || !strings.Contains(line, `"id":5`) {
			continue
		}
		var rep rpcReply
		if json.Unmarshal([]byte(line), &rep) != nil || rep.Error == nil || rep.Error.Code != -32000 ||
			!strings.Contains(string(rep.Error.Data), `"id":"test-key"`) || !strings.Contains(string(rep.Error.Data), `"agent":"ta"`) {
			t.Fatalf("session/new over HTTP: %s, want -32000 with the agent and its authMethods in data", line)
		}
		return
	}
	t.Fatalf("no session/new answer on the stream: %v", sc.Err())
}

// TestAgentLoginAfterRestart: logins live in memory only. After a restart ann's stored session is detached;
// her prompt re-attaches it, the agent answers auth_required to session/load, and the prompt is a 409
// agent_login_required with the methods. Once she logs in again the same prompt is answered.
func TestAgentLoginAfterRestart(t *testing.T) {
	g, dataDir, workdir := loginGateway(t)
	r := &loginRecorder{t: t, g: g}
	put := map[string]any{"methodId": "test-key", "vars": map[string]string{"TEST_API_KEY": loginKey}}
	if code, _, body := r.do("ann", "PUT", "/v1/agents/ta/login/env", put); code != http.StatusOK {
		t.Fatalf("PUT key: %d %s", code, body)
	}
	sid := r.create("ann", "ta")
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}

	g = loginGatewayOn(t, dataDir, workdir)
	r = &loginRecorder{t: t, g: g}
	code, _, body := r.do("ann", "POST", "/v1/sessions/"+sid+"/prompt?wait=true", map[string]string{"text": "hello again"})
	var p loginProblem
	_ = json.Unmarshal([]byte(body), &p)
	if code != http.StatusConflict || p.Code != "agent_login_required" || len(p.AuthMethods) != 2 {
		t.Fatalf("prompt re-attaching without a login: %d %s, want 409 agent_login_required with the methods", code, body)
	}
	if code, _, body := r.do("ann", "PUT", "/v1/agents/ta/login/env", put); code != http.StatusOK {
		t.Fatalf("PUT key again: %d %s", code, body)
	}
	if code, _, body := r.do("ann", "POST", "/v1/sessions/"+sid+"/prompt?wait=true", map[string]string{"text": "hello again"}); code != http.StatusOK || !strings.Contains(body, "end_turn") {
		t.Fatalf("prompt after logging in again: %d %s", code, body)
	}
}

// TestAgentLoginRunsInThePrincipalsHome: with "home": "per-principal", an agent method's authenticate runs in
// the caller's HOME, where that principal's sessions find what the agent kept; it ran in the probe's HOME,
// shared by every principal's login calls.
func TestAgentLoginRunsInThePrincipalsHome(t *testing.T) {
	bin := testAgentBinary(t)
	homes := t.TempDir()
	cfg := map[string]any{"agent_servers": map[string]any{
		"ta": map[string]any{"command": bin, "args": []string{"-mode", "echo", "-login", loginKey}, "home": "per-principal"},
	}}
	file := filepath.Join(t.TempDir(), "agents.json")
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	g, _ := startWithUsers(t, "--agents", file, "--default-agent", "ta", "--workdir", t.TempDir(), "--home-root", homes)
	r := &loginRecorder{t: t, g: g}
	if code, _, body := r.do("ann", "POST", "/v1/agents/ta/login/agent", map[string]string{"methodId": "agent-login"}); code != http.StatusOK {
		t.Fatalf("agent login: %d %s", code, body)
	}
	if fi, err := os.Stat(filepath.Join(homes, "ta", "ann")); err != nil || !fi.IsDir() {
		t.Fatalf("ann's HOME after her agent login: %v (the login ran elsewhere)", err)
	}
	if _, err := os.Stat(filepath.Join(homes, "ta", "bob")); err == nil {
		t.Fatal("bob has a HOME though only ann logged in")
	}
}

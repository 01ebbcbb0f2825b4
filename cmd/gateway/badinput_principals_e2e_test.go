package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestBadInputCorpusPrincipals is the bad-input corpus where principals matter: users ann, bob and root, an
// agent with an env_var login ("tk") and one with terminal logins ("ta"). Another user's session or login is
// not found, a viewer is forbidden, bad login variables and callback ports get their documented codes, and the
// login socket closes on bad messages with its documented codes while the login runs on.
func TestBadInputCorpusPrincipals(t *testing.T) {
	dir := t.TempDir()
	bin := testAgentBinary(t)
	cfg := map[string]any{"agent_servers": map[string]any{
		"tk": map[string]any{"command": bin, "args": []string{"-mode", "echo", "-login", loginKey}},
		"ta": map[string]any{"command": bin, "args": []string{"-mode", "login"}, "home": "per-principal"},
	}}
	b, _ := json.Marshal(cfg)
	agentsFile := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(agentsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	g, _ := startWithUsers(t, "--agents", agentsFile, "--home-root", filepath.Join(dir, "homes"))

	var own, shared sessionJSON
	for _, s := range []*sessionJSON{&own, &shared} {
		st, code, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann"))
		if st != 201 || json.Unmarshal([]byte(body), s) != nil {
			t.Fatalf("ann's session: %d %s %s", st, code, body)
		}
	}
	if st, code, body := g.request("PUT", "/v1/sessions/"+shared.ID+"/shares/bob", []byte(`{"role":"viewer"}`), as("ann")); st != 200 {
		t.Fatalf("share with bob: %d %s %s", st, code, body)
	}
	id := startLogin(t, g, "ann", "oauth")
	sock := dialLogin(t, g, "ta", id, as("ann"))
	sock.readUntil("/callback\r")
	m := redirectPort.FindStringSubmatch(sock.out.String())
	if m == nil {
		t.Fatalf("no redirect URL in:\n%s", sock.out.String())
	}
	sock.c.CloseNow()
	port := m[1]

	sp, vp, lp := "/v1/sessions/"+own.ID, "/v1/sessions/"+shared.ID, "/v1/agents/ta/login/terminal/"+id
	env := "/v1/agents/tk/login/env"
	cases := []struct {
		name, who, method, path string
		body                    string
		hdr                     map[string]string
		status                  int
		code                    string
	}{
		{"another user renames", "bob", "PATCH", sp, `{"title":"mine"}`, nil, 404, "session_not_found"},
		{"another user lists files", "bob", "GET", sp + "/files?q=a", "", nil, 404, "session_not_found"},
		{"another user forks", "bob", "POST", sp + "/fork", "", nil, 404, "session_not_found"},
		{"another user deletes with the agent's copy", "bob", "DELETE", sp + "?agent=delete", "", nil, 404, "session_not_found"},
		{"another user prompts with a key", "bob", "POST", sp + "/prompt", `{"text":"a"}`, map[string]string{"Idempotency-Key": "k1"}, 404, "session_not_found"},
		{"a viewer renames", "bob", "PATCH", vp, `{"title":"mine"}`, nil, 403, "forbidden"},
		{"a viewer lists files", "bob", "GET", vp + "/files", "", nil, 403, "forbidden"},
		{"a viewer forks", "bob", "POST", vp + "/fork", "", nil, 403, "forbidden"},
		{"a viewer deletes with the agent's copy", "bob", "DELETE", vp + "?agent=delete", "", nil, 403, "forbidden"},
		{"another user cancels the login", "bob", "DELETE", lp, "", nil, 404, "login_not_found"},
		{"an admin cancels the login", "root", "DELETE", lp, "", nil, 404, "login_not_found"},
		{"another user's callback", "bob", "GET", lp + "/callback/" + port + "/callback?code=x", "", nil, 404, "login_not_found"},
		{"the login under another agent", "ann", "DELETE", "/v1/agents/tk/login/terminal/" + id, "", nil, 404, "login_not_found"},
		{"callback port not a number", "ann", "GET", lp + "/callback/http/callback", "", nil, 400, "bad_request"},
		{"callback port zero", "ann", "GET", lp + "/callback/0/callback", "", nil, 400, "bad_request"},
		{"callback port over 65535", "ann", "GET", lp + "/callback/65536/callback", "", nil, 400, "bad_request"},
		{"callback port negative", "ann", "GET", lp + "/callback/-1/callback", "", nil, 400, "bad_request"},
		{"callback port huge", "ann", "GET", lp + "/callback/99999999999999999999/callback", "", nil, 400, "bad_request"},
		{"the login command's own 400", "ann", "GET", lp + "/callback/" + port + "/callback?code=wrong", "", nil, 400, ""},
		{"callback to a port the login does not hold", "ann", "GET", lp + "/callback/" + g.port() + "/callback", "", nil, 404, "callback_not_listening"},
		{"second terminal login", "ann", "POST", "/v1/agents/ta/login/terminal", `{"methodId":"code"}`, nil, 409, "login_in_progress"},
		{"unknown terminal method", "ann", "POST", "/v1/agents/ta/login/terminal", `{"methodId":"nope"}`, nil, 400, "unknown_auth_method"},
		{"4 KB terminal method", "bob", "POST", "/v1/agents/ta/login/terminal", `{"methodId":"` + strings.Repeat("m", 4096) + `"}`, nil, 400, "unknown_auth_method"},
		{"4 KB env method", "ann", "PUT", env, `{"methodId":"` + strings.Repeat("m", 4096) + `"}`, nil, 400, "unknown_login_method"},
		{"4 KB variable name", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"sk-long-enough","` + strings.Repeat("N", 4096) + `":"x"}}`, nil, 400, "invalid_login_vars"},
		{"terminal login of an env_var method", "ann", "POST", "/v1/agents/tk/login/terminal", `{"methodId":"test-key"}`, nil, 400, "unknown_auth_method"},
		{"secret under 4 bytes", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"abc"}}`, nil, 400, "invalid_login_vars"},
		{"required variable missing", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_REGION":"eu"}}`, nil, 400, "invalid_login_vars"},
		{"required variable empty", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":""}}`, nil, 400, "invalid_login_vars"},
		{"no variables", "ann", "PUT", env, `{"methodId":"test-key"}`, nil, 400, "invalid_login_vars"},
		{"undeclared variable", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"sk-long-enough","LD_PRELOAD":"/tmp/x.so"}}`, nil, 400, "invalid_login_vars"},
		{"PATH as a variable", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"sk-long-enough","PATH":"/tmp"}}`, nil, 400, "invalid_login_vars"},
		{"NUL in a value", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"sk-\u0000-long"}}`, nil, 400, "invalid_login_vars"},
		{"value over 16 KiB", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"` + strings.Repeat("k", 16<<10+1) + `"}}`, nil, 400, "invalid_login_vars"},
		{"name with =", "ann", "PUT", env, `{"methodId":"test-key","vars":{"TEST_API_KEY":"sk-long-enough","A=B":"x"}}`, nil, 400, "invalid_login_vars"},
		{"agent method on env", "ann", "PUT", env, `{"methodId":"agent-login","vars":{}}`, nil, 400, "unknown_login_method"},
		{"env_var method on agent", "ann", "POST", "/v1/agents/tk/login/agent", `{"methodId":"test-key"}`, nil, 400, "unknown_login_method"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, code, body := g.request(c.method, c.path, []byte(c.body), mergeHdr(as(c.who), c.hdr))
			if status != c.status || code != c.code {
				t.Fatalf("got %d %q, want %d %q: %s", status, code, c.status, c.code, truncateStr(body, 300))
			}
			for _, leak := range []string{"httpapi.", "sessions.", "core.", "termlogin.", loginKey, "sk-long-enough"} {
				if strings.Contains(body, leak) {
					t.Fatalf("the answer shows %q: %s", leak, truncateStr(body, 300))
				}
			}
			if code != "" && len(body) > maxProblemBytes {
				t.Fatalf("a %d-byte problem echoes the input: %s", len(body), truncateStr(body, 300))
			}
		})
	}

	// The login socket: another user's attach is 4004; a bad message closes 1003, an oversized one 1009, and
	// the login itself runs on (the next socket attaches to it).
	if st := loginSocketClose(t, g, "bob", id, nil); st != 4004 {
		t.Errorf("another user's socket: close %d, want 4004", st)
	}
	for _, c := range []loginSocketCase{
		{"binary frame", websocket.MessageBinary, "\x03", websocket.StatusUnsupportedData},
		{"not JSON", websocket.MessageText, `{"type":`, websocket.StatusUnsupportedData},
		{"unknown type", websocket.MessageText, `{"type":"exit","exitCode":0}`, websocket.StatusUnsupportedData},
		{"type not a string", websocket.MessageText, `{"type":1}`, websocket.StatusUnsupportedData},
		{"negative size", websocket.MessageText, `{"type":"resize","cols":-1,"rows":24}`, websocket.StatusUnsupportedData},
		{"zero size", websocket.MessageText, `{"type":"resize","cols":0,"rows":24}`, websocket.StatusUnsupportedData},
		{"size over 1000", websocket.MessageText, `{"type":"resize","cols":5000,"rows":24}`, websocket.StatusUnsupportedData},
		{"frame over 64 KiB", websocket.MessageText, `{"type":"input","data":"` + strings.Repeat("x", 64<<10) + `"}`, websocket.StatusMessageTooBig},
	} {
		t.Run("socket "+c.name, func(t *testing.T) {
			if st := loginSocketClose(t, g, "ann", id, &c); st != c.want {
				t.Fatalf("close %d, want %d", st, c.want)
			}
		})
	}

	// The callback reaches the login command with the path the browser sent, escaped characters included.
	st, _, body := g.request("GET", lp+"/callback/"+port+"/%63allback?code="+loginCode, nil, as("ann"))
	if st != 200 || !strings.Contains(body, "logged in") {
		t.Fatalf("callback with an escaped path: %d %s", st, truncateStr(body, 300))
	}
}

// loginSocketCase is one message to a login socket and the close code it gets.
type loginSocketCase struct {
	name string
	typ  websocket.MessageType
	msg  string
	want websocket.StatusCode
}

// loginSocketClose attaches to login id as who, sends c's message (when c is not nil) and returns the close code
// the socket ends with; output frames are skipped.
func loginSocketClose(t *testing.T, g *gateway, who, id string, c *loginSocketCase) websocket.StatusCode {
	t.Helper()
	s := dialLogin(t, g, "ta", id, as(who))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c != nil {
		_ = s.c.Write(ctx, c.typ, []byte(c.msg)) // the gateway may close before it read the whole frame
	}
	for {
		typ, data, err := s.c.Read(ctx)
		if err != nil {
			return websocket.CloseStatus(err)
		}
		if typ == websocket.MessageText {
			t.Fatalf("text frame %s before the close", data)
		}
	}
}

// TestTerminalLoginStartFailureHidesPath: a login command that cannot start is 502 login_failed naming the
// agent, as an agent that cannot start is: the command's path (the gateway's file system) stays in the log.
func TestTerminalLoginStartFailureHidesPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret-dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testAgentBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ta")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"agent_servers": map[string]any{"ta": map[string]any{"command": bin, "args": []string{"-mode", "login"}}}})
	agentsFile := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(agentsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--agents", agentsFile, "--workdir", work)
	if st, code, body := g.request("GET", "/v1/agents/ta/login", nil, nil); st != 200 {
		t.Fatalf("the agent's login methods: %d %s %s", st, code, body)
	}
	if err := os.Remove(work); err != nil { // known methods, a command that cannot start in its directory
		t.Fatal(err)
	}
	st, code, body := g.request("POST", "/v1/agents/ta/login/terminal", []byte(`{"methodId":"code"}`), nil)
	if st != 502 || code != "login_failed" || !strings.Contains(body, `\"ta\"`) {
		t.Fatalf("got %d %q: %s", st, code, body)
	}
	if strings.Contains(body, "secret-dir") {
		t.Fatalf("the answer shows the command's path: %s", body)
	}
	if !strings.Contains(g.logs.String(), "secret-dir") {
		t.Fatal("the log lacks the command's path")
	}
}

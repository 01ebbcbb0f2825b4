package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The test agent's login mode (internal/testagent/login.go) offers two terminal auth methods: "code" prompts
// "Enter code: " and takes loginCode, "oauth" waits on a loopback port for its OAuth redirect. session/new
// answers auth_required until one of them wrote a credential under the agent's HOME.
const (
	loginCode   = "4242-7171"
	loginBanner = "testagent login banner 9f1c"
)

// termLoginGateway runs ann, bob and root (users file) with agent "ta", the test agent in login mode with a HOME
// per principal, and a data dir. It returns the gateway and the data dir.
func termLoginGateway(t *testing.T) (*gateway, string) {
	t.Helper()
	dir := t.TempDir()
	agentsFile := filepath.Join(dir, "agents.json")
	cfg := map[string]any{"agent_servers": map[string]any{"ta": map[string]any{
		"command": testAgentBinary(t), "args": []string{"-mode", "login"}, "home": "per-principal"}}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(agentsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	g, _ := startWithUsers(t, "--agents", agentsFile, "--default-agent", "ta", "--home-root", filepath.Join(dir, "homes"),
		"--data-dir", dataDir)
	return g, dataDir
}

// loginSocket is a client of a terminal login's WebSocket.
type loginSocket struct {
	t    *testing.T
	c    *websocket.Conn
	out  bytes.Buffer // the terminal's output so far
	exit *struct {
		Type     string `json:"type"`
		ExitCode int    `json:"exitCode"`
		Signal   string `json:"signal"`
		Reason   string `json:"reason"`
	}
	closeCode websocket.StatusCode
}

func dialLogin(t *testing.T, g *gateway, agent, id string, hdr map[string]string) *loginSocket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	c, _, err := websocket.Dial(ctx, g.wsURL("/v1/agents/"+agent+"/login/terminal/"+id), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial the login: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &loginSocket{t: t, c: c, closeCode: -1}
}

// readUntil reads frames until the output holds want ("" = until the socket closes). It reports whether the
// socket is still open.
func (s *loginSocket) readUntil(want string) bool {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for want == "" || !strings.Contains(s.out.String(), want) {
		typ, data, err := s.c.Read(ctx)
		if err != nil {
			s.closeCode = websocket.CloseStatus(err)
			if want != "" {
				s.t.Fatalf("socket ended (%v) before %q; output:\n%s", err, want, s.out.String())
			}
			return false
		}
		if typ == websocket.MessageBinary {
			s.out.Write(data)
			continue
		}
		if err := json.Unmarshal(data, &s.exit); err != nil || s.exit.Type != "exit" {
			s.t.Fatalf("unexpected text frame %s", data)
		}
	}
	return true
}

func (s *loginSocket) send(v any) {
	s.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.c.Write(ctx, websocket.MessageText, b); err != nil {
		s.t.Fatal(err)
	}
}

// startLogin starts a terminal login as who and returns its id.
func startLogin(t *testing.T, g *gateway, who, method string) string {
	t.Helper()
	st, code, body := g.request("POST", "/v1/agents/ta/login/terminal", []byte(`{"methodId":"`+method+`","cols":60,"rows":20}`), as(who))
	var res struct {
		LoginID  string    `json:"loginId"`
		Deadline time.Time `json:"deadline"`
	}
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &res) != nil || res.LoginID == "" || res.Deadline.IsZero() {
		t.Fatalf("start the login as %s: %d %s %s", who, st, code, body)
	}
	return res.LoginID
}

// TestTerminalLoginOverWebSocket: Ann's session cannot start before she logs in; the login runs in a PTY that
// she types the code into over the WebSocket, it exits 0, and her next session starts. Bob can neither
// attach to nor cancel her login, and his sessions still need a login of his own (HOME per principal). What
// the terminal showed is in neither the gateway's log nor its data dir.
func TestTerminalLoginOverWebSocket(t *testing.T) {
	t.Parallel()
	g, dataDir := termLoginGateway(t)
	if st, code, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann")); st == http.StatusCreated {
		t.Fatalf("a session started before any login: %d %s %s", st, code, body)
	}
	id := startLogin(t, g, "ann", "code")

	// Bob: Ann's login is not found, as one that never existed.
	bobSock := dialLogin(t, g, "ta", id, as("bob"))
	if bobSock.readUntil(""); bobSock.closeCode != 4004 || bobSock.out.Len() > 0 {
		t.Errorf("bob attached to ann's login: close %d, output %q", bobSock.closeCode, bobSock.out.String())
	}
	if st, code, _ := g.request("DELETE", "/v1/agents/ta/login/terminal/"+id, nil, as("bob")); st != 404 || code != "login_not_found" {
		t.Errorf("bob cancelled ann's login: %d %s", st, code)
	}
	if st, code, _ := g.request("GET", "/v1/agents/ta/login/terminal/"+id+"/callback/1/x", nil, as("bob")); st != 404 || code != "login_not_found" {
		t.Errorf("bob used ann's login's callback: %d %s", st, code)
	}

	s := dialLogin(t, g, "ta", id, as("ann"))
	s.readUntil("Enter code: ")
	s.send(map[string]any{"type": "resize", "cols": 100, "rows": 30})
	s.send(map[string]any{"type": "input", "data": loginCode + "\r"})
	s.readUntil("")
	if s.exit == nil || s.exit.ExitCode != 0 || s.exit.Reason != "exited" || s.closeCode != websocket.StatusNormalClosure {
		t.Fatalf("exit %+v, close %d; output:\n%s", s.exit, s.closeCode, s.out.String())
	}
	if !strings.Contains(s.out.String(), "Logged in.") || !strings.Contains(s.out.String(), loginCode) {
		t.Errorf("the terminal did not echo the code and the result:\n%s", s.out.String())
	}

	st, code, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann"))
	var sess struct{ ID string }
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &sess) != nil {
		t.Fatalf("ann's session after her login: %d %s %s", st, code, body)
	}
	if st, _, events := g.request("GET", "/v1/sessions/"+sess.ID+"/events", nil, as("ann")); st != http.StatusOK ||
		strings.Contains(events, loginBanner) || strings.Contains(events, loginCode) {
		t.Errorf("ann's event log: %d, holds the login's output: %s", st, events)
	}
	if st, _, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("bob")); st == http.StatusCreated {
		t.Errorf("bob's session started on ann's login: %s", body)
	}
	// Once ended, the same login cannot be typed into; a new one may start.
	id2 := startLogin(t, g, "ann", "code")
	if id2 == id {
		t.Error("a new login got the old id")
	}
	if st, _, _ := g.request("DELETE", "/v1/agents/ta/login/terminal/"+id2, nil, as("ann")); st != http.StatusNoContent {
		t.Errorf("ann cancels her login: %d", st)
	}

	logs := g.logs.String()
	if !strings.Contains(logs, "terminal login started") {
		t.Errorf("the login's start is not logged:\n%s", logs)
	}
	for _, secret := range []string{loginBanner, loginCode} {
		if strings.Contains(logs, secret) {
			t.Errorf("the gateway's log holds the terminal's %q", secret)
		}
		if err := grepDir(dataDir, secret); err != nil {
			t.Error(err)
		}
	}
}

// grepDir fails when a file under dir holds s.
func grepDir(dir, s string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(s)) {
			return &os.PathError{Op: "stored the terminal's output", Path: path, Err: os.ErrExist}
		}
		return nil
	})
}

// TestTerminalLoginWrongCode: a wrong code ends the login with the command's own status and words, and the
// agent still needs a login. A second start while one runs is 409 login_in_progress naming it.
func TestTerminalLoginWrongCode(t *testing.T) {
	t.Parallel()
	g, _ := termLoginGateway(t)
	id := startLogin(t, g, "ann", "code")
	st, code, body := g.request("POST", "/v1/agents/ta/login/terminal", []byte(`{"methodId":"code"}`), as("ann"))
	if st != http.StatusConflict || code != "login_in_progress" || !strings.Contains(body, `"loginId":"`+id+`"`) {
		t.Errorf("second login: %d %s %s", st, code, body)
	}
	if st, code, _ := g.request("POST", "/v1/agents/ta/login/terminal", []byte(`{"methodId":"nope"}`), as("bob")); st != 400 || code != "unknown_auth_method" {
		t.Errorf("unknown method: %d %s", st, code)
	}
	if st, code, _ := g.request("POST", "/v1/agents/nope/login/terminal", []byte(`{"methodId":"code"}`), as("bob")); st != 404 || code != "unknown_agent" {
		t.Errorf("unknown agent: %d %s", st, code)
	}
	s := dialLogin(t, g, "ta", id, as("ann"))
	s.readUntil("Enter code: ")
	s.send(map[string]any{"type": "input", "data": "0000\r"})
	s.readUntil("")
	if s.exit == nil || s.exit.ExitCode != 1 || s.exit.Reason != "exited" || !strings.Contains(s.out.String(), "Wrong code.") {
		t.Fatalf("exit %+v; output:\n%s", s.exit, s.out.String())
	}
	if st, _, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann")); st == http.StatusCreated {
		t.Errorf("a session started after a failed login: %s", body)
	}
}

var redirectPort = regexp.MustCompile(`redirect_uri=http://localhost:(\d+)/callback`)

// TestTerminalLoginCallback: the OAuth redirect a login command waits for on a loopback port reaches it
// through the gateway, for the login's principal and only on a port the login itself listens on.
func TestTerminalLoginCallback(t *testing.T) {
	t.Parallel()
	g, _ := termLoginGateway(t)
	id := startLogin(t, g, "ann", "oauth")
	s := dialLogin(t, g, "ta", id, as("ann"))
	s.readUntil("/callback\r") // the redirect URL printed whole
	m := redirectPort.FindStringSubmatch(s.out.String())
	if m == nil {
		t.Fatalf("no redirect URL in:\n%s", s.out.String())
	}
	base := "/v1/agents/ta/login/terminal/" + id + "/callback/"
	// The gateway's own port is loopback too, but not the login's.
	if st, code, _ := g.request("GET", base+g.port()+"/callback?code="+loginCode, nil, as("ann")); st != 404 || code != "callback_not_listening" {
		t.Errorf("callback to the gateway's own port: %d %s", st, code)
	}
	if st, code, _ := g.request("GET", base+m[1]+"/callback?code="+loginCode, nil, as("bob")); st != 404 || code != "login_not_found" {
		t.Errorf("bob's callback: %d %s", st, code)
	}
	st, _, body := g.request("GET", base+m[1]+"/callback?code="+loginCode, nil, as("ann"))
	if st != http.StatusOK || !strings.Contains(body, "logged in") {
		t.Fatalf("ann's callback: %d %s", st, body)
	}
	s.readUntil("")
	if s.exit == nil || s.exit.ExitCode != 0 {
		t.Fatalf("exit %+v; output:\n%s", s.exit, s.out.String())
	}
	if st, code, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann")); st != http.StatusCreated {
		t.Fatalf("ann's session after the OAuth login: %d %s %s", st, code, body)
	}
}

// TestPerPrincipalHomeKeepsTheProbe: a session's start refreshes what GET /v1/agents reports about its agent;
// with a HOME per principal that start must not make the agent's answer look stale, so listing the agents
// after it starts no further process.
func TestPerPrincipalHomeKeepsTheProbe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	if err := os.Mkdir(pids, 0o700); err != nil {
		t.Fatal(err)
	}
	agentsFile := filepath.Join(dir, "agents.json")
	b, _ := json.Marshal(map[string]any{"agent_servers": map[string]any{"ta": map[string]any{
		"command": testAgentBinary(t), "args": []string{"-mode", "echo", "-pid-dir", pids}, "home": "per-principal",
		"confine": map[string]any{"write": []string{pids}}}}})
	if err := os.WriteFile(agentsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	g, _ := startWithUsers(t, "--agents", agentsFile, "--default-agent", "ta", "--home-root", filepath.Join(dir, "homes"))
	started := func() int {
		entries, err := os.ReadDir(pids)
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	if st, _, body := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann")); st != http.StatusCreated {
		t.Fatalf("ann's session: %d %s", st, body)
	}
	before := started()
	if before == 0 {
		t.Fatal("the agent recorded no pid")
	}
	for range 2 {
		if st, _, body := g.request("GET", "/v1/agents", nil, as("bob")); st != http.StatusOK || !strings.Contains(body, `"probedAt"`) {
			t.Fatalf("GET /v1/agents: %d %s", st, body)
		}
	}
	if n := started(); n != before {
		t.Errorf("listing the agents started %d more agent processes after ann's session", n-before)
	}
	if _, err := os.Stat(filepath.Join(dir, "homes", "ta", "ann")); err != nil {
		t.Errorf("ann's HOME: %v", err)
	}
}

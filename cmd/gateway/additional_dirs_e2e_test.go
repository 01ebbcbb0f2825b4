package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAdditionalDirectoriesConfined: a session may name additionalDirectories, each confined by the workspace
// roots exactly as its cwd (same codes on REST and /acp); the agent (a real process advertising the
// capability) receives them resolved, the session view lists them, and an agent without the capability gets
// none: the create is refused.
func TestAdditionalDirectoriesConfined(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	extra := filepath.Join(ws, "extra")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{ws, extra, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(ws, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "testagent-echo")
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--workspace-root", ws, "--workdir", ws,
		"--agent", "dirs="+bin+" -mode echo -additional-dirs", "--agent", "plain="+bin+" -mode echo", "--default-agent", "dirs")

	create := func(agent string, dirs ...string) (int, string, string) {
		body, _ := json.Marshal(map[string]any{"agent": agent, "cwd": ws, "additionalDirectories": dirs})
		return g.request("POST", "/v1/sessions", body, nil)
	}
	for _, c := range []struct {
		name, agent string
		dirs        []string
		status      int
		code        string
	}{
		{"outside the roots", "dirs", []string{extra, outside}, 403, "forbidden_cwd"},
		{"a symlink out of the roots", "dirs", []string{link}, 403, "forbidden_cwd"},
		{"a dotdot out of the roots", "dirs", []string{ws + "/../outside"}, 403, "forbidden_cwd"},
		{"relative", "dirs", []string{"extra"}, 400, "bad_request"},
		{"missing", "dirs", []string{filepath.Join(ws, "nope")}, 400, "bad_request"},
		{"an agent without the capability", "plain", []string{extra}, 422, "additional_directories_unsupported"},
	} {
		if st, code, body := create(c.agent, c.dirs...); st != c.status || code != c.code {
			t.Errorf("%s: %d %q, want %d %q: %s", c.name, st, code, c.status, c.code, body)
		}
	}

	st, _, body := create("dirs", extra, ws+"/extra/")
	var s struct {
		ID    string   `json:"id"`
		Dirs  []string `json:"additionalDirectories"`
		Agent string   `json:"agent"`
	}
	if st != 201 || json.Unmarshal([]byte(body), &s) != nil {
		t.Fatalf("create with a directory inside the roots: %d %s", st, body)
	}
	if len(s.Dirs) != 1 || s.Dirs[0] != extra {
		t.Fatalf("the view's additionalDirectories: %s", body)
	}
	var res struct{ Text string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"which dirs"}`, &res); code != 200 ||
		!strings.Contains(res.Text, "additionalDirectories ["+extra+"]\n") {
		t.Fatalf("what the agent received: %d %q", code, res.Text)
	}
	// Without additionalDirectories an agent without the capability is fine.
	if st, _, body := create("plain"); st != 201 {
		t.Fatalf("plain create: %d %s", st, body)
	}

	// /acp answers the same refusals as for a cwd: -32602.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dialACP(t, g, ctx, acpInitialize)
	for i, dirs := range [][]string{{outside}, {"extra"}} {
		params, _ := json.Marshal(map[string]any{"cwd": ws, "mcpServers": []any{}, "additionalDirectories": dirs})
		id := string(rune('2' + i))
		frame := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":` + string(params) + `}`)
		if got := acpCall(t, ctx, c, id, frame); !strings.Contains(string(got), `"code":-32602`) {
			t.Errorf("/acp session/new with %v: %s", dirs, got)
		}
	}
	params, _ := json.Marshal(map[string]any{"cwd": ws, "mcpServers": []any{}, "additionalDirectories": []string{extra}})
	if got := acpCall(t, ctx, c, "9", []byte(`{"jsonrpc":"2.0","id":9,"method":"session/new","params":`+string(params)+`}`)); !strings.Contains(string(got), `"sessionId"`) {
		t.Errorf("/acp session/new with a directory inside the roots: %s", got)
	}
}

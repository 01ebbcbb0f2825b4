package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const testToken = "s3cret-token-for-tests"

// maxProblemBytes bounds a problem answer to bad input: its detail names the problem, never echoes the input.
const maxProblemBytes = 1024

// request sends a raw request with optional headers ("Host" sets the request's Host) and returns status,
// problem code and body.
func (g *gateway) request(method, path string, body []byte, hdr map[string]string) (int, string, string) {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.base+path, bytes.NewReader(body))
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, "", "" // the body is the WebSocket: nothing to read
	}
	data, _ := io.ReadAll(resp.Body)
	var p struct {
		Code string `json:"code"`
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		_ = json.Unmarshal(data, &p)
	}
	return resp.StatusCode, p.Code, string(data)
}

// TestBadInputCorpus throws malformed, oversized and hostile input at a live gateway while a turn runs
// alongside; each case gets its documented status and code, and the running turn still finishes.
func TestBadInputCorpus(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--workdir", ws, "--max-body-bytes", "4096", "--max-prompt-bytes", "2048", "--ws-max-frame", "1024", "--demo-delay", "20ms")
	auth := map[string]string{}
	bystander := g.createSession(nil)
	bw := g.dial("/v1/sessions/" + bystander.ID + "/ws")
	var bt struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+bystander.ID+"/prompt", `{"text":"keep going"}`, &bt)

	s := g.createSession(nil)
	sp := "/v1/sessions/" + s.ID
	big := bytes.Repeat([]byte("a"), 8192)
	cases := []struct {
		name, method, path string
		body               []byte
		hdr                map[string]string
		status             int
		code               string
	}{
		{"malformed JSON", "POST", "/v1/sessions", []byte(`{"agent":`), nil, 400, "invalid_json"},
		{"truncated JSON", "POST", sp + "/prompt", []byte(`{"text":"hel`), nil, 400, "invalid_json"},
		{"wrong type", "POST", sp + "/prompt", []byte(`{"text":42}`), nil, 400, "invalid_json"},
		{"unknown field", "POST", "/v1/sessions", []byte(`{"agnet":"demo"}`), nil, 400, "invalid_json"},
		{"trailing data", "POST", "/v1/sessions", []byte(`{} {}`), nil, 400, "invalid_json"},
		{"invalid UTF-8", "POST", sp + "/prompt", []byte("{\"text\":\"\xff\xfe\"}"), nil, 400, "invalid_json"},
		{"huge body", "POST", sp + "/prompt", append(append([]byte(`{"text":"`), big...), '"', '}'), nil, 413, "body_too_large"},
		{"prompt too large", "POST", sp + "/prompt", []byte(`{"text":"` + strings.Repeat("b", 3000) + `"}`), nil, 413, "prompt_too_large"},
		{"empty prompt", "POST", sp + "/prompt", []byte(`{"prompt":[]}`), nil, 400, "invalid_prompt"},
		{"prompt block without type", "POST", sp + "/prompt", []byte(`{"prompt":[{"text":"x"}]}`), nil, 400, "invalid_prompt"},
		{"both text and prompt", "POST", sp + "/prompt", []byte(`{"text":"a","prompt":[{"type":"text","text":"b"}]}`), nil, 400, "invalid_prompt"},
		{"neither text nor prompt", "POST", sp + "/prompt", []byte(`{}`), nil, 400, "invalid_prompt"},
		{"null text and a prompt", "POST", sp + "/prompt", []byte(`{"text":null,"prompt":null}`), nil, 400, "invalid_prompt"},
		{"empty text", "POST", sp + "/prompt", []byte(`{"text":""}`), nil, 400, "invalid_prompt"},
		{"prompt not an array", "POST", sp + "/prompt", []byte(`{"prompt":"hi"}`), nil, 400, "invalid_prompt"},
		{"bad wait", "POST", sp + "/prompt?wait=maybe", []byte(`{"text":"a"}`), nil, 400, "bad_request"},
		{"timeout without wait", "POST", sp + "/prompt?timeout=5s", []byte(`{"text":"a"}`), nil, 400, "bad_request"},
		{"malformed timeout", "POST", sp + "/prompt?wait=true&timeout=soon", []byte(`{"text":"a"}`), nil, 400, "bad_request"},
		{"zero timeout", "GET", sp + "/turn?wait=true&timeout=0s", nil, nil, 400, "bad_request"},
		{"negative timeout", "POST", sp + "/permissions/nope?wait=true&timeout=-1s", []byte(`{"optionId":"x"}`), nil, 400, "bad_request"},
		{"huge timeout", "GET", sp + "/turn?wait=true&timeout=100000h", nil, nil, 400, "bad_request"},
		{"bad turn wait", "GET", sp + "/turn?wait=later", nil, nil, 400, "bad_request"},
		{"turn before any", "GET", sp + "/turn?wait=true", nil, nil, 409, "no_turn"},
		{"path traversal id", "GET", "/v1/sessions/..%2F..%2Fetc%2Fpasswd", nil, nil, 404, "session_not_found"},
		{"10 KB id", "GET", "/v1/sessions/" + strings.Repeat("x", 10240), nil, nil, 404, "session_not_found"},
		{"NUL in id", "GET", "/v1/sessions/a%00b", nil, nil, 404, "session_not_found"},
		{"unknown route", "GET", "/v1/nope", nil, nil, 404, "route_not_found"},
		{"unknown method", "PUT", "/v1/sessions", nil, nil, 405, "method_not_allowed"},
		{"POST on who am I", "POST", "/v1/me", nil, nil, 405, "method_not_allowed"},
		{"relative cwd", "POST", "/v1/sessions", []byte(`{"cwd":"relative/dir"}`), nil, 400, "bad_request"},
		{"escaping cwd", "POST", "/v1/sessions", []byte(`{"cwd":"` + ws + `/../outside"}`), nil, 403, "forbidden_cwd"},
		{"symlink escape cwd", "POST", "/v1/sessions", []byte(`{"cwd":"` + ws + `/escape"}`), nil, 403, "forbidden_cwd"},
		{"missing cwd", "POST", "/v1/sessions", []byte(`{"cwd":"` + ws + `/nope"}`), nil, 400, "bad_request"},
		{"unknown agent", "POST", "/v1/sessions", []byte(`{"agent":"../../bin/sh"}`), nil, 400, "unknown_agent"},
		{"unknown policy", "POST", "/v1/sessions", []byte(`{"permissionPolicy":"yolo"}`), nil, 400, "bad_request"},
		{"unknown permission", "POST", sp + "/permissions/nope", []byte(`{"optionId":"x"}`), nil, 404, "permission_not_found"},
		{"empty permission answer", "POST", sp + "/permissions/nope", []byte(`{}`), nil, 400, "bad_request"},
		{"cancel when idle", "POST", sp + "/cancel", nil, nil, 409, "no_turn"},
		{"share role unknown", "PUT", sp + "/shares/bob", []byte(`{"role":"owner"}`), nil, 400, "bad_request"},
		{"share without a role", "PUT", sp + "/shares/bob", []byte(`{}`), nil, 400, "bad_request"},
		{"share role not a string", "PUT", sp + "/shares/bob", []byte(`{"role":1}`), nil, 400, "invalid_json"},
		{"share principal too long", "PUT", sp + "/shares/" + strings.Repeat("p", 300), []byte(`{"role":"viewer"}`), nil, 400, "bad_request"},
		{"share of no session", "PUT", "/v1/sessions/nope/shares/bob", []byte(`{"role":"viewer"}`), nil, 404, "session_not_found"},
		{"cross-origin POST", "POST", "/v1/sessions", []byte(`{}`), map[string]string{"Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"ticket without auth", "POST", "/v1/ws-tickets", nil, nil, 404, "auth_disabled"},
		{"null body", "POST", "/v1/sessions", []byte(`null`), nil, 400, "bad_request"},
		{"array body", "POST", "/v1/sessions", []byte(`[]`), nil, 400, "invalid_json"},
		{"string body", "POST", sp + "/prompt", []byte(`"hi"`), nil, 400, "invalid_json"},
		{"nested wrong type", "POST", "/v1/sessions", []byte(`{"agent":["demo"]}`), nil, 400, "invalid_json"},
		{"ws without upgrade", "GET", sp + "/ws", nil, nil, 426, "upgrade_required"},
		{"acp without upgrade", "GET", "/acp", nil, nil, 426, "upgrade_required"},
		{"acp agent without upgrade", "GET", "/acp/demo", nil, nil, 426, "upgrade_required"},
		{"rebinding Host", "POST", "/v1/sessions", []byte(`{}`), map[string]string{"Host": "rebind.attacker.example"}, 403, "misdirected_host"},
		{"cross-site fetch", "POST", "/v1/sessions", []byte(`{}`), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "forbidden_origin"},
		{"foreign upgrade", "GET", "/acp", nil, upgradeHeaders(map[string]string{"Origin": "https://evil.example"}), 403, "forbidden_origin"},

		// Agent login (docs/rest.md "Agent login", "Terminal logins"): the demo agent offers no auth method.
		{"login of unknown agent", "GET", "/v1/agents/nope/login", nil, nil, 400, "unknown_agent"},
		{"login of traversal agent", "GET", "/v1/agents/..%2F..%2Fbin%2Fsh/login", nil, nil, 400, "unknown_agent"},
		{"login of NUL agent", "GET", "/v1/agents/de%00mo/login", nil, nil, 400, "unknown_agent"},
		{"login of 10 KB agent", "GET", "/v1/agents/" + strings.Repeat("a", 10240) + "/login", nil, nil, 400, "unknown_agent"},
		{"logout of unknown agent", "DELETE", "/v1/agents/nope/login", nil, nil, 400, "unknown_agent"},
		{"POST on login", "POST", "/v1/agents/demo/login", nil, nil, 405, "method_not_allowed"},
		{"login env malformed", "PUT", "/v1/agents/demo/login/env", []byte(`{"methodId":`), nil, 400, "invalid_json"},
		{"login env methodId not a string", "PUT", "/v1/agents/demo/login/env", []byte(`{"methodId":1}`), nil, 400, "invalid_json"},
		{"login env vars not an object", "PUT", "/v1/agents/demo/login/env", []byte(`{"methodId":"m","vars":["A=1"]}`), nil, 400, "invalid_json"},
		{"login env value not a string", "PUT", "/v1/agents/demo/login/env", []byte(`{"methodId":"m","vars":{"A":1}}`), nil, 400, "invalid_json"},
		{"login env unknown field", "PUT", "/v1/agents/demo/login/env", []byte(`{"methodId":"m","env":{}}`), nil, 400, "invalid_json"},
		{"login env without methodId", "PUT", "/v1/agents/demo/login/env", []byte(`{"vars":{}}`), nil, 400, "bad_request"},
		{"login env null body", "PUT", "/v1/agents/demo/login/env", []byte(`null`), nil, 400, "bad_request"},
		{"login env unknown method", "PUT", "/v1/agents/demo/login/env", []byte(`{"methodId":"nope","vars":{"PATH":"/tmp"}}`), nil, 400, "unknown_login_method"},
		{"login env unknown agent", "PUT", "/v1/agents/nope/login/env", []byte(`{"methodId":"m"}`), nil, 400, "unknown_agent"},
		{"login env huge body", "PUT", "/v1/agents/demo/login/env", append(append([]byte(`{"methodId":"m","vars":{"A":"`), big...), '"', '}', '}'), nil, 413, "body_too_large"},
		{"login agent malformed", "POST", "/v1/agents/demo/login/agent", []byte(`{"methodId"`), nil, 400, "invalid_json"},
		{"login agent unknown field", "POST", "/v1/agents/demo/login/agent", []byte(`{"methodId":"m","vars":{}}`), nil, 400, "invalid_json"},
		{"login agent without methodId", "POST", "/v1/agents/demo/login/agent", nil, nil, 400, "bad_request"},
		{"login agent unknown method", "POST", "/v1/agents/demo/login/agent", []byte(`{"methodId":"nope"}`), nil, 400, "unknown_login_method"},
		{"login agent control characters", "POST", "/v1/agents/demo/login/agent", []byte(`{"methodId":"\u001b[2J\u0000"}`), nil, 400, "unknown_login_method"},
		{"login agent huge body", "POST", "/v1/agents/demo/login/agent", append(append([]byte(`{"methodId":"`), big...), '"', '}'), nil, 413, "body_too_large"},
		{"terminal login malformed", "POST", "/v1/agents/demo/login/terminal", []byte(`{"methodId":"m",}`), nil, 400, "invalid_json"},
		{"terminal login negative cols", "POST", "/v1/agents/demo/login/terminal", []byte(`{"methodId":"m","cols":-1}`), nil, 400, "invalid_json"},
		{"terminal login cols as string", "POST", "/v1/agents/demo/login/terminal", []byte(`{"methodId":"m","rows":"24"}`), nil, 400, "invalid_json"},
		{"terminal login cols over 1000", "POST", "/v1/agents/demo/login/terminal", []byte(`{"methodId":"m","cols":1001}`), nil, 400, "bad_request"},
		{"terminal login without methodId", "POST", "/v1/agents/demo/login/terminal", []byte(`{}`), nil, 400, "bad_request"},
		{"terminal login unknown agent", "POST", "/v1/agents/nope/login/terminal", []byte(`{"methodId":"m"}`), nil, 404, "unknown_agent"},
		{"terminal login 10 KB agent", "POST", "/v1/agents/" + strings.Repeat("a", 10240) + "/login/terminal", []byte(`{"methodId":"m"}`), nil, 404, "unknown_agent"},
		{"terminal login of a built-in agent", "POST", "/v1/agents/demo/login/terminal", []byte(`{"methodId":"m"}`), nil, 400, "unknown_auth_method"},
		{"terminal login socket without upgrade", "GET", "/v1/agents/demo/login/terminal/nope", nil, nil, 426, "upgrade_required"},
		{"cancel unknown login", "DELETE", "/v1/agents/demo/login/terminal/nope", nil, nil, 404, "login_not_found"},
		{"cancel traversal login id", "DELETE", "/v1/agents/demo/login/terminal/..%2F..%2Fetc", nil, nil, 404, "login_not_found"},
		{"cancel NUL login id", "DELETE", "/v1/agents/demo/login/terminal/a%00b", nil, nil, 404, "login_not_found"},
		{"callback of unknown login", "GET", "/v1/agents/demo/login/terminal/nope/callback/8080/callback?code=x", nil, nil, 404, "login_not_found"},
		{"callback traversal of unknown login", "GET", "/v1/agents/demo/login/terminal/nope/callback/8080/..%2F..%2F..%2Fsessions", nil, nil, 404, "login_not_found"},
		{"POST on callback", "POST", "/v1/agents/demo/login/terminal/nope/callback/8080/callback", nil, nil, 405, "method_not_allowed"},

		// Fork, delete with the agent's copy, rename, files, workspace directories, idempotency keys.
		{"fork malformed", "POST", sp + "/fork", []byte(`{"cwd":`), nil, 400, "invalid_json"},
		{"fork cwd not a string", "POST", sp + "/fork", []byte(`{"cwd":1}`), nil, 400, "invalid_json"},
		{"fork unknown field", "POST", sp + "/fork", []byte(`{"agent":"demo"}`), nil, 400, "invalid_json"},
		{"fork mcpServers not a list", "POST", sp + "/fork", []byte(`{"mcpServers":{"a":1}}`), nil, 400, "bad_request"},
		{"fork huge body", "POST", sp + "/fork", append(append([]byte(`{"cwd":"`), big...), '"', '}'), nil, 413, "body_too_large"},
		{"fork unsupported", "POST", sp + "/fork", nil, nil, 422, "fork_unsupported"},
		{"fork of no session", "POST", "/v1/sessions/nope/fork", nil, nil, 404, "session_not_found"},
		{"delete agent=keep", "DELETE", sp + "?agent=keep", nil, nil, 400, "bad_request"},
		{"delete agent empty", "DELETE", sp + "?agent=", nil, nil, 400, "bad_request"},
		{"delete agent twice", "DELETE", sp + "?agent=delete&agent=delete", nil, nil, 400, "bad_request"},
		{"delete agent upper case", "DELETE", sp + "?agent=DELETE", nil, nil, 400, "bad_request"},
		{"delete agent of no session", "DELETE", "/v1/sessions/nope?agent=delete", nil, nil, 404, "session_not_found"},
		{"rename malformed", "PATCH", sp, []byte(`{"title":"x`), nil, 400, "invalid_json"},
		{"rename title not a string", "PATCH", sp, []byte(`{"title":42}`), nil, 400, "invalid_json"},
		{"rename unknown field", "PATCH", sp, []byte(`{"title":"x","name":"y"}`), nil, 400, "invalid_json"},
		{"rename without title", "PATCH", sp, []byte(`{}`), nil, 400, "bad_request"},
		{"rename null title", "PATCH", sp, []byte(`{"title":null}`), nil, 400, "bad_request"},
		{"rename blank title", "PATCH", sp, []byte(`{"title":" \t "}`), nil, 400, "bad_request"},
		{"rename control character", "PATCH", sp, []byte(`{"title":"a\u001b[31mb"}`), nil, 400, "bad_request"},
		{"rename newline", "PATCH", sp, []byte(`{"title":"a\nb"}`), nil, 400, "bad_request"},
		{"rename NUL", "PATCH", sp, []byte(`{"title":"a\u0000b"}`), nil, 400, "bad_request"},
		{"rename invalid UTF-8", "PATCH", sp, []byte("{\"title\":\"\xff\"}"), nil, 400, "invalid_json"},
		{"rename 201 characters", "PATCH", sp, []byte(`{"title":"` + strings.Repeat("é", 201) + `"}`), nil, 400, "bad_request"},
		{"rename huge body", "PATCH", sp, append(append([]byte(`{"title":"`), big...), '"', '}'), nil, 413, "body_too_large"},
		{"rename no session", "PATCH", "/v1/sessions/nope", []byte(`{"title":"x"}`), nil, 404, "session_not_found"},
		{"files limit zero", "GET", sp + "/files?limit=0", nil, nil, 400, "bad_request"},
		{"files negative limit", "GET", sp + "/files?limit=-1", nil, nil, 400, "bad_request"},
		{"files limit over 200", "GET", sp + "/files?limit=201", nil, nil, 400, "bad_request"},
		{"files limit not a number", "GET", sp + "/files?limit=ten", nil, nil, 400, "bad_request"},
		{"files limit huge", "GET", sp + "/files?limit=99999999999999999999", nil, nil, 400, "bad_request"},
		{"files q too long", "GET", sp + "/files?q=" + strings.Repeat("q", 257), nil, nil, 400, "bad_request"},
		{"files q invalid UTF-8", "GET", sp + "/files?q=%ff%fe", nil, nil, 400, "bad_request"},
		{"files q traversal", "GET", sp + "/files?q=..%2F..%2Fetc%2Fpasswd", nil, nil, 200, ""},
		{"files q NUL", "GET", sp + "/files?q=a%00b", nil, nil, 200, ""},
		{"files of no session", "GET", "/v1/sessions/nope/files", nil, nil, 404, "session_not_found"},
		{"dirs relative path", "GET", "/v1/workspace/dirs?path=ws", nil, nil, 400, "bad_request"},
		{"dirs control character path", "GET", "/v1/workspace/dirs?path=%0a%1b", nil, nil, 400, "bad_request"},
		{"dirs NUL in path", "GET", "/v1/workspace/dirs?path=" + url.QueryEscape(ws+"/sub\x00"), nil, nil, 400, "bad_request"},
		{"dirs dot-dot out", "GET", "/v1/workspace/dirs?path=" + url.QueryEscape(ws+"/../outside"), nil, nil, 403, "forbidden_cwd"},
		{"dirs symlink out", "GET", "/v1/workspace/dirs?path=" + url.QueryEscape(ws+"/escape"), nil, nil, 403, "forbidden_cwd"},
		{"dirs absolute outside", "GET", "/v1/workspace/dirs?path=%2Fetc", nil, nil, 403, "forbidden_cwd"},
		{"dirs missing", "GET", "/v1/workspace/dirs?path=" + url.QueryEscape(ws+"/nope"), nil, nil, 400, "bad_request"},
		{"dirs of a file", "GET", "/v1/workspace/dirs?path=" + url.QueryEscape(ws+"/file"), nil, nil, 400, "bad_request"},
		{"dirs huge path", "GET", "/v1/workspace/dirs?path=" + url.QueryEscape(ws+"/"+strings.Repeat("d", 5000)), nil, nil, 400, "bad_request"},
		{"empty idempotency key", "POST", sp + "/prompt", []byte(`{"text":"a"}`), map[string]string{"Idempotency-Key": ""}, 400, "invalid_idempotency_key"},
		{"256-byte idempotency key", "POST", sp + "/prompt", []byte(`{"text":"a"}`), map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, 400, "invalid_idempotency_key"},
		{"tab in idempotency key", "POST", sp + "/prompt", []byte(`{"text":"a"}`), map[string]string{"Idempotency-Key": "a\tb"}, 400, "invalid_idempotency_key"},
		{"non-ASCII idempotency key", "POST", sp + "/prompt", []byte(`{"text":"a"}`), map[string]string{"Idempotency-Key": "clé"}, 400, "invalid_idempotency_key"},
		{"idempotency key of no session", "POST", "/v1/sessions/nope/prompt", []byte(`{"text":"a"}`), map[string]string{"Idempotency-Key": "k"}, 404, "session_not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, code, body := g.request(c.method, c.path, c.body, mergeHdr(auth, c.hdr))
			if status != c.status || code != c.code {
				t.Fatalf("got %d %q, want %d %q: %s", status, code, c.status, c.code, truncateStr(body, 300))
			}
			for _, leak := range []string{"httpapi.", "sessions.", "core.", "json.RawMessage", "acp."} {
				if strings.Contains(body, leak) {
					t.Fatalf("the answer names a Go type (%q): %s", leak, truncateStr(body, 300))
				}
			}
			if code != "" && len(body) > maxProblemBytes {
				t.Fatalf("a %d-byte problem echoes the input: %s", len(body), truncateStr(body, 300))
			}
		})
	}
	// Two Idempotency-Key headers name no one key.
	req, _ := http.NewRequest("POST", g.base+sp+"/prompt", strings.NewReader(`{"text":"a"}`))
	req.Header["Idempotency-Key"] = []string{"k1", "k2"}
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		var p struct{ Code string }
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != 400 || p.Code != "invalid_idempotency_key" {
			t.Errorf("two Idempotency-Key headers: %d %q", resp.StatusCode, p.Code)
		}
	}
	for path, want := range map[string]string{"/v1/sessions": "GET, POST", sp: "DELETE, GET, PATCH", sp + "/prompt": "POST", "/v1/me": "GET"} {
		if resp := g.rawResponse("PUT", path, nil); resp.StatusCode != 405 || resp.Header.Get("Allow") != want {
			t.Errorf("PUT %s: %d, Allow %q, want %q", path, resp.StatusCode, resp.Header.Get("Allow"), want)
		}
	}
	// A session with a relative-but-inside cwd works; the escape attempts created nothing.
	var list struct{ Sessions []sessionJSON }
	g.do("GET", "/v1/sessions", nil, &list)
	if len(list.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(list.Sessions))
	}

	// WebSocket: cross-origin upgrade refused, oversized frame closed with 1009, binary with 1003, a text frame
	// that is not UTF-8 with 1007; an error reply never echoes an id that is not a string or number.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := strings.Replace(g.base, "http", "ws", 1) + sp + "/ws"
	if _, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin upgrade: err=%v resp=%v", err, resp)
	}
	w := g.dial(sp + "/ws")
	w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	_ = w.c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("x"), 4096))
	if st := w.waitClosed(); st != websocket.StatusMessageTooBig || w.closeReason() != "frame too big" {
		t.Fatalf("oversized frame: close %d %q, want 1009 \"frame too big\" (a short constant, not library text)", st, w.closeReason())
	}
	w2 := g.dial(sp + "/ws")
	w2.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	w2.send(map[string]any{"jsonrpc": "2.0", "id": "x", "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "a"}}})
	w2.waitFor("unknown request error", func(f frame) bool { return f.Error != nil && f.Error.Code == -32011 })
	_ = w2.c.Write(ctx, websocket.MessageText, []byte(`{not json`))
	w2.waitFor("parse error", func(f frame) bool { return f.Error != nil && f.Error.Code == -32700 })
	_ = w2.c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":{"evil":[1]},"method":"x"}`))
	if f, _ := w2.waitFor("method not found", func(f frame) bool { return f.Error != nil && f.Error.Code == -32601 }); string(f.ID) != "null" {
		t.Fatalf("an object id was echoed: %s", f.Raw)
	}
	_ = w2.c.Write(ctx, websocket.MessageBinary, []byte{1, 2, 3})
	if st := w2.waitClosed(); st != websocket.StatusUnsupportedData {
		t.Fatalf("binary frame: close %d, want 1003", st)
	}
	w3 := g.dial(sp + "/ws")
	w3.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	_ = w3.c.Write(ctx, websocket.MessageText, []byte("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"result\":{}}"))
	if st := w3.waitClosed(); st != websocket.StatusInvalidFramePayloadData {
		t.Fatalf("invalid UTF-8 text frame: close %d, want 1007", st)
	}

	// The bystander's turn ran on, answered and finished.
	perm, _ := bw.waitFor("bystander permission", isPermissionRequest)
	if code := g.do("POST", "/v1/sessions/"+bystander.ID+"/permissions/"+permIDOf(perm), `{"optionId":"allow-once"}`, nil); code != 200 {
		t.Fatalf("bystander answer %d", code)
	}
	if ended, _ := bw.waitFor("bystander turn_ended", turnEnded(bt.TurnID)); ended.Params.StopReason != "end_turn" {
		t.Fatalf("bystander %s", ended.Raw)
	}
}

// TestAuthTokensAndTickets runs with a token: uniform 401s, tickets single-use, the bearer subprotocol.
func TestAuthTokensAndTickets(t *testing.T) {
	g := startGateway(t, "--token", testToken, "--rate-limit", "0")
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic " + testToken}, {"Authorization": "Bearer"}} {
		if st, code, _ := g.request("GET", "/v1/sessions", nil, h); st != 401 || code != "unauthorized" {
			t.Fatalf("headers %v: %d %q", h, st, code)
		}
	}
	if st, _, _ := g.request("GET", "/healthz", nil, nil); st != 200 {
		t.Fatalf("healthz needs no token: %d", st)
	}
	if st, code, _ := g.request("GET", "/metrics", nil, nil); st != 401 || code != "unauthorized" {
		t.Fatalf("metrics without token: %d %q", st, code)
	}
	st, _, body := g.request("POST", "/v1/sessions", []byte(`{}`), bearer)
	if st != 201 {
		t.Fatalf("create with token: %d %s", st, body)
	}
	var s sessionJSON
	_ = json.Unmarshal([]byte(body), &s)
	if strings.Contains(g.logs.String(), testToken) {
		t.Fatal("token appears in the logs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := strings.Replace(g.base, "http", "ws", 1) + "/v1/sessions/" + s.ID + "/ws"
	if _, resp, err := websocket.Dial(ctx, wsURL, nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("upgrade without credential: %v %v", err, resp)
	}
	_, _, tb := g.request("POST", "/v1/ws-tickets", nil, bearer)
	var ticket struct{ Ticket string }
	_ = json.Unmarshal([]byte(tb), &ticket)
	c, _, err := websocket.Dial(ctx, wsURL+"?ticket="+ticket.Ticket, nil)
	if err != nil {
		t.Fatalf("upgrade with ticket: %v", err)
	}
	c.CloseNow()
	if _, resp, err := websocket.Dial(ctx, wsURL+"?ticket="+ticket.Ticket, nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("reused ticket: %v %v", err, resp)
	}
	if _, resp, err := websocket.Dial(ctx, wsURL+"?ticket=forged", nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("forged ticket: %v %v", err, resp)
	}
	c, _, err = websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"acp-gateway.v1", "bearer." + testToken}})
	if err != nil {
		t.Fatalf("upgrade with bearer subprotocol: %v", err)
	}
	if c.Subprotocol() != "acp-gateway.v1" {
		t.Fatalf("selected subprotocol %q", c.Subprotocol())
	}
	c.CloseNow()
}

func TestRateLimit(t *testing.T) {
	g := startGateway(t, "--token", testToken, "--rate-limit", "1")
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	limited := false
	for i := 0; i < 20 && !limited; i++ {
		st, code, _ := g.request("GET", "/v1/agents", nil, bearer)
		limited = st == 429 && code == "rate_limited"
	}
	if !limited {
		t.Fatal("20 requests at a 1/s limit were never refused")
	}
}

// TestFailedAuthIsRateLimited: wrong tokens from one address are refused with 429 and Retry-After after a
// burst, before the credential is even checked: the right token from there waits too.
func TestFailedAuthIsRateLimited(t *testing.T) {
	g := startGateway(t, "--token", testToken, "--rate-limit", "0")
	limited := false
	for i := 0; i < 60 && !limited; i++ {
		resp := g.rawResponse("GET", "/v1/agents", map[string]string{"Authorization": "Bearer guess-" + strconv.Itoa(i)})
		switch resp.StatusCode {
		case 401:
		case 429:
			limited = true
			if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
			}
		default:
			t.Fatalf("wrong token: %d", resp.StatusCode)
		}
	}
	if !limited {
		t.Fatal("60 wrong tokens in a row were never refused with 429")
	}
	if st, code, _ := g.request("GET", "/v1/agents", nil, map[string]string{"Authorization": "Bearer " + testToken}); st != 429 || code != "rate_limited" {
		t.Fatalf("right token from a limited address: %d %q", st, code)
	}
}

// TestRefusesUnusableTokens: a token the UI could not send as a WebSocket subprotocol, or a blank one, is
// refused at start with a clear error, never accepted and then failed on every upgrade.
func TestRefusesUnusableTokens(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("two words\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"slash and padding", []string{"--token", "abc/def+gh="}, nil},
		{"blank", []string{"--token", "   "}, nil},
		{"blank env", nil, map[string]string{"GATEWAY_TOKEN": " \t"}},
		{"non-ASCII", []string{"--token", "pässword"}, nil},
		{"space in file", []string{"--token-file", file}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig(c.args, func(k string) string { return c.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "token") {
				t.Fatalf("parseConfig = %v, want a token error", err)
			}
		})
	}
	if _, err := parseConfig([]string{"--token", "Abc-123_x.y~z"}, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatalf("a valid token: %v", err)
	}
}

func TestRefusesNonLoopbackWithoutToken(t *testing.T) {
	err := run(context.Background(), []string{"--addr", "0.0.0.0:0"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "without a token") {
		t.Fatalf("run = %v", err)
	}
}

// TestMetricsMoveAfterATurn scrapes /metrics after a turn and finds the counters moved.
func TestMetricsMoveAfterATurn(t *testing.T) {
	g := startGateway(t)
	s := g.createSession(`{"permissionPolicy":"approve-all"}`)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var res struct{ StopReason string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"count me"}`, &res); code != 200 || res.StopReason != "end_turn" {
		t.Fatalf("prompt %d %+v", code, res)
	}
	w.waitFor("turn_ended", func(f frame) bool { return f.Method == "_gateway/turn_ended" })
	_, _, body := g.request("GET", "/metrics", nil, nil)
	for _, want := range []string{
		`gateway_turns_started_total 1`,
		`gateway_turns_ended_total{stop_reason="end_turn"} 1`,
		`gateway_permission_requests_total{allowed="true",by="policy"} 1`,
		`gateway_sessions{status="idle"} 1`,
		`gateway_agent_starts_total{agent="demo"} 1`,
		`gateway_clients{face="ws"} 1`,
		`gateway_frames_sent_total{face="ws"}`,
		`gateway_http_request_duration_seconds_count{code="201",route="/v1/sessions"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(body, "gateway_agent_updates_total") || strings.Contains(body, "gateway_agent_updates_total 0\n") {
		t.Error("agent updates did not move")
	}
}

func mergeHdr(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func truncateStr(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// TestMissingAgentBinaryHidesPath: an agent whose binary is missing is refused with its name and a stable
// code (503 agent_unavailable); the path (the gateway's file system) stays in the log.
func TestMissingAgentBinaryHidesPath(t *testing.T) {
	g := startGateway(t, "--agent", "ghost=/nonexistent/secret-dir/ghost-agent --flag")
	st, code, body := g.request("POST", "/v1/sessions", []byte(`{"agent":"ghost"}`), nil)
	if st != 503 || code != "agent_unavailable" || !strings.Contains(body, `\"ghost\"`) {
		t.Fatalf("got %d %q: %s", st, code, body)
	}
	if strings.Contains(body, "secret-dir") {
		t.Fatalf("the answer shows the binary's path: %s", body)
	}
	if !strings.Contains(g.logs.String(), "secret-dir") {
		t.Fatal("the log lacks the binary's path")
	}
}

// TestUnstartableAgentHidesPathOnEveryFace: an agent whose binary exists but cannot be executed (its
// interpreter is missing: exec fails with the gateway's paths in the error) is reported by REST and by `/acp`
// session/new with the agent's name only; the path stays in the log.
func TestUnstartableAgentHidesPathOnEveryFace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret-dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "broken-agent")
	if err := os.WriteFile(bin, []byte("#!/nonexistent/secret-interp\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	g := startGateway(t, "--agent", "broken="+bin, "--default-agent", "broken", "--workdir", cwd)
	st, code, body := g.request("POST", "/v1/sessions", []byte(`{"agent":"broken"}`), nil)
	if st != 502 || code != "agent_start_failed" || strings.Contains(body, "secret") {
		t.Fatalf("REST: got %d %q: %s", st, code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialACP(t, g, ctx, acpInitialize)
	newReq := `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}`
	if err := c.Write(ctx, websocket.MessageText, []byte(newReq)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"id":2`) {
			continue
		}
		if !strings.Contains(string(data), `"error"`) || !strings.Contains(string(data), `broken`) || strings.Contains(string(data), "secret") {
			t.Fatalf("/acp session/new: %s", data)
		}
		break
	}
	if !strings.Contains(g.logs.String(), "secret-dir") {
		t.Fatal("the log lacks the binary's path")
	}
}

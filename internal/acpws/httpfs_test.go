package acpws

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// An HTTP client that advertised fs serves the agent's fs/* requests, which arrive on the session stream
// with the session's id; its answers are POSTed. DELETE releases the delegation: the gateway serves again.
func TestHTTPFSDelegatedToClientReleasedByDelete(t *testing.T) {
	e := fsEnv(t, Options{})
	cl, _ := e.httpInit("/acp/fs", map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
	conn := cl.open("")
	id := cl.request("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{}}, "")
	_, resp := conn.until(id, nil)
	var made struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(resp.Result, &made) != nil || made.SessionID == "" {
		t.Fatalf("session/new: %s", resp.raw)
	}
	sid := made.SessionID
	sess := cl.open(sid)
	var asked []string
	prompt := cl.request("session/prompt", textPrompt(sid, "read "+e.dir+"/a.txt\nwrite "+e.dir+"/b.txt hi"), sid)
	before, resp := sess.until(prompt, func(m msg) {
		asked = append(asked, m.Method)
		if m.sessionID() != sid {
			t.Errorf("%s without the session's id: %s", m.Method, m.raw)
		}
		var answer map[string]any
		switch m.Method {
		case "fs/read_text_file":
			answer = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": "from browser"}}
		case "fs/write_text_file":
			answer = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32000, "message": "read-only buffer"}}
		default:
			t.Errorf("unexpected request %s", m.raw)
			return
		}
		if r := cl.post(answer, sid); r.status != http.StatusAccepted {
			t.Errorf("answer: %d %s", r.status, r.body)
		}
	})
	if resp.Error != nil {
		t.Fatalf("prompt: %s", resp.raw)
	}
	if got, want := agentText(before), "ok \"from browser\"\nerr -32000\n"; got != want || len(asked) != 2 {
		t.Fatalf("agent saw %q (asked %v), want %q", got, asked, want)
	}

	if r := doHTTP(t, "DELETE", cl.url, nil, map[string]string{"Acp-Connection-Id": cl.conn}); r.status != http.StatusAccepted {
		t.Fatalf("DELETE: %d", r.status)
	}
	sess.ended()
	s, _ := e.reg.Get(sid)
	waitFor(t, "the connection to let the session go", func() bool { return s.View().Clients == 0 })
	// Another connection, without fs: the gateway reads from disk.
	other, _ := e.httpInit("/acp/fs", map[string]any{})
	other.open("")
	osess := other.open(sid)
	load := other.request("session/resume", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, sid)
	if _, r := osess.until(load, nil); r.Error != nil {
		t.Fatalf("resume: %s", r.raw)
	}
	prompt = other.request("session/prompt", textPrompt(sid, "read "+e.dir+"/a.txt"), sid)
	before, _ = osess.until(prompt, noRequests(t))
	if got, want := agentText(before), "ok \"from disk\"\n"; got != want {
		t.Fatalf("after DELETE the agent saw %q, want %q", got, want)
	}
}

// Shutdown ends every Streamable HTTP connection: its streams end after what was queued, new requests get
// 503 shutting_down, and Shutdown returns (no connection goroutine outlives the handler).
func TestHTTPShutdownEndsStreams(t *testing.T) {
	e := newEnv(t, Options{})
	cl, conn, sid, sess := newHTTPSession(t, e, map[string]any{})
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := e.acp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	conn.ended()
	sess.ended()
	if r := cl.post(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "session/list"}, ""); r.status != http.StatusServiceUnavailable || r.problemCode() != "shutting_down" {
		t.Fatalf("POST after shutdown: %d %s", r.status, r.body)
	}
	if s, err := e.reg.Get(sid); err != nil || s.Status() == "closed" {
		t.Fatalf("the face's shutdown closed the session: %v", err)
	}
}

// An initialize that waits longer than IdleTimeout for the agent (its first initialize probes it) keeps its
// connection: the POST waiting for its answer is activity.
func TestHTTPSlowInitializeOutlivesIdleTimeout(t *testing.T) {
	const idle = 50 * time.Millisecond
	started, gate := make(chan struct{}, 1), make(chan struct{})
	slow := agents.Spec{Name: "slow", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	e := newEnvCfg(t, Options{IdleTimeout: idle}, sessions.Config{}, slow)
	answered := make(chan hresp, 1)
	go func() {
		b := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
		res, err := http.Post(e.srv.URL+"/acp/slow", "application/json", strings.NewReader(b))
		if err != nil {
			answered <- hresp{body: []byte(err.Error())}
			return
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answered <- hresp{status: res.StatusCode, header: res.Header, body: body}
	}()
	select {
	case <-started:
	case <-time.After(stepTimeout):
		t.Fatal("the agent was never started")
	}
	// Let the idle timeout pass several times over while the agent is held (the passage of time is what is
	// tested here, not a synchronisation).
	time.Sleep(5 * idle)
	close(gate)
	r := <-answered
	if r.status != http.StatusOK || r.header.Get("Acp-Connection-Id") == "" {
		t.Fatalf("slow initialize: %d %s", r.status, r.body)
	}
	cl := &hclient{t: t, url: e.srv.URL + "/acp/slow", conn: r.header.Get("Acp-Connection-Id")}
	cl.open("") // the connection is there
}

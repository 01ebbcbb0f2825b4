package acpws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// fsAgent runs the fs/* calls its prompt names ("read PATH", "write PATH TEXT") against its client (the
// gateway) and reports one line per call as an agent_message_chunk: "ok <content>" or "err <code>".
type fsAgent struct {
	acp.Agent
	conn *acp.AgentSideConnection
}

func (a *fsAgent) Initialize(_ context.Context, r acp.InitializeRequest) (acp.InitializeResponse, error) {
	if !r.ClientCapabilities.Fs.ReadTextFile || !r.ClientCapabilities.Fs.WriteTextFile {
		return acp.InitializeResponse{}, errors.New("gateway did not advertise fs")
	}
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *fsAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "agent-side-id"}, nil
}

func (a *fsAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *fsAgent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	var out strings.Builder
	for _, line := range strings.Split(p.Prompt[0].Text.Text, "\n") {
		f := strings.SplitN(line, " ", 3)
		var content string
		var err error
		switch f[0] {
		case "read":
			var r acp.ReadTextFileResponse
			r, err = a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: p.SessionId, Path: f[1]})
			content = r.Content
		case "write":
			_, err = a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: p.SessionId, Path: f[1], Content: f[2]})
		default:
			continue
		}
		var re *acp.RequestError
		switch {
		case errors.As(err, &re):
			fmt.Fprintf(&out, "err %d\n", re.Code)
		case err != nil:
			fmt.Fprintf(&out, "err %v\n", err)
		default:
			fmt.Fprintf(&out, "ok %q\n", content)
		}
	}
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText(out.String())})
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// gatedReader holds reads until the agent's connection is set up.
type gatedReader struct {
	r     io.Reader
	ready <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

func fsSpec() agents.Spec {
	return agents.Spec{Name: "fs", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		a := &fsAgent{}
		ready := make(chan struct{})
		a.conn = acp.NewAgentSideConnection(a, out, gatedReader{in, ready})
		a.conn.SetLogger(slog.New(slog.DiscardHandler))
		close(ready)
		select {
		case <-a.conn.Done():
		case <-ctx.Done():
		}
		if c, ok := in.(io.Closer); ok {
			_ = c.Close()
		}
		<-a.conn.Done()
		return nil
	}}
}

// fsEnv is an env with the fs agent, and a cwd holding a.txt ("from disk").
func fsEnv(t *testing.T, opts Options) *env {
	t.Helper()
	e := newEnvCfg(t, opts, sessions.Config{}, fsSpec())
	if err := os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// initFS runs initialize advertising the given fs capabilities (none: no `fs` member at all).
func (cl *client) initFS(read, write bool) {
	cl.t.Helper()
	caps := map[string]any{}
	if read || write {
		caps["fs"] = map[string]any{"readTextFile": read, "writeTextFile": write}
	}
	cl.mustResult("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}, nil)
}

// browser answers fs requests as an editor would: reads with "from browser", writes with an error. It
// records what it was asked.
type browser struct {
	t    *testing.T
	cl   *client
	mu   sync.Mutex
	seen []msg
}

func (b *browser) onRequest(m msg) {
	b.mu.Lock()
	b.seen = append(b.seen, m)
	b.mu.Unlock()
	switch m.Method {
	case "fs/read_text_file":
		b.cl.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": "from browser"}})
	case "fs/write_text_file":
		b.cl.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32000, "message": "read-only buffer"}})
	default:
		b.t.Errorf("unexpected request %s", m.raw)
	}
}

func (b *browser) methods() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.seen {
		out = append(out, m.Method)
	}
	return out
}

// runScript prompts sid with script and returns the agent's report; onRequest sees the gateway's requests.
func runScript(t *testing.T, cl *client, sid, script string, onRequest func(msg)) string {
	t.Helper()
	before, resp := cl.until(cl.request("session/prompt", textPrompt(sid, script)), onRequest)
	if resp.Error != nil {
		t.Fatalf("prompt: %d %s", resp.Error.Code, resp.Error.Message)
	}
	return agentText(before)
}

func agentText(ms []msg) string {
	var out strings.Builder
	for _, m := range ms {
		if m.update() != "agent_message_chunk" {
			continue
		}
		var p struct {
			Update struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		out.WriteString(p.Update.Content.Text)
	}
	return out.String()
}

func noRequests(t *testing.T) func(msg) {
	return func(m msg) { t.Errorf("unexpected request from the gateway: %s", m.raw) }
}

// TestFSDelegatedToClient: a client that advertised fs serves the agent's reads and writes; its error goes
// back to the agent; the params carry the gateway session id and the request id is one the socket minted.
func TestFSDelegatedToClient(t *testing.T) {
	e := fsEnv(t, Options{})
	cl := e.dial("/acp/fs")
	cl.initFS(true, true)
	sid := cl.newSession(e.dir)
	b := &browser{t: t, cl: cl}
	got := runScript(t, cl, sid, "read "+e.dir+"/a.txt\nwrite "+e.dir+"/b.txt hi", b.onRequest)
	if want := "ok \"from browser\"\nerr -32000\n"; got != want {
		t.Fatalf("agent saw %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "b.txt")); err == nil {
		t.Fatal("a delegated write reached the disk")
	}
	if m := b.methods(); len(m) != 2 || m[0] != "fs/read_text_file" || m[1] != "fs/write_text_file" {
		t.Fatalf("browser was asked %v", m)
	}
	ids := map[string]bool{}
	for _, m := range b.seen {
		var p struct {
			SessionID string `json:"sessionId"`
			Path      string `json:"path"`
			Content   string `json:"content"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.SessionID != sid {
			t.Fatalf("%s params %s: want sessionId %s", m.Method, m.Params, sid)
		}
		var n uint64
		if json.Unmarshal(m.ID, &n) != nil || ids[string(m.ID)] {
			t.Fatalf("request id %s: want a fresh number", m.ID)
		}
		ids[string(m.ID)] = true
		if m.Method == "fs/write_text_file" && (p.Path != e.dir+"/b.txt" || p.Content != "hi") {
			t.Fatalf("write params %s", m.Params)
		}
	}
}

// TestFSWithoutClientCapabilities: a client that advertised nothing is never asked; the gateway serves from
// the session cwd.
func TestFSWithoutClientCapabilities(t *testing.T) {
	e := fsEnv(t, Options{})
	cl := e.dial("/acp/fs")
	cl.initFS(false, false)
	sid := cl.newSession(e.dir)
	got := runScript(t, cl, sid, "read "+e.dir+"/a.txt\nwrite "+e.dir+"/b.txt hi", noRequests(t))
	if want := "ok \"from disk\"\nok \"\"\n"; got != want {
		t.Fatalf("agent saw %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(e.dir, "b.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("b.txt: %q %v", b, err)
	}
}

// TestFSReadOnlyClient: only what the client advertised is delegated: reads go to it, writes to the disk.
func TestFSReadOnlyClient(t *testing.T) {
	e := fsEnv(t, Options{})
	cl := e.dial("/acp/fs")
	cl.initFS(true, false)
	sid := cl.newSession(e.dir)
	b := &browser{t: t, cl: cl}
	got := runScript(t, cl, sid, "read "+e.dir+"/a.txt\nwrite "+e.dir+"/b.txt hi", b.onRequest)
	if want := "ok \"from browser\"\nok \"\"\n"; got != want {
		t.Fatalf("agent saw %q, want %q", got, want)
	}
	if m := b.methods(); len(m) != 1 || m[0] != "fs/read_text_file" {
		t.Fatalf("browser was asked %v", m)
	}
	if data, err := os.ReadFile(filepath.Join(e.dir, "b.txt")); err != nil || string(data) != "hi" {
		t.Fatalf("b.txt: %q %v", data, err)
	}
}

// TestFSClientTimeout: a client that does not answer in time fails the agent's request with -32603 and is
// told to stop with `$/cancel_request`; its late answer is ignored.
func TestFSClientTimeout(t *testing.T) {
	e := fsEnv(t, Options{FSTimeout: 200 * time.Millisecond})
	cl := e.dial("/acp/fs")
	cl.initFS(true, true)
	sid := cl.newSession(e.dir)
	var asked msg
	before, resp := cl.until(cl.request("session/prompt", textPrompt(sid, "read "+e.dir+"/a.txt")), func(m msg) { asked = m })
	if resp.Error != nil {
		t.Fatalf("prompt: %s", resp.raw)
	}
	if got := agentText(before); got != "err -32603\n" {
		t.Fatalf("agent saw %q", got)
	}
	if asked.Method != "fs/read_text_file" {
		t.Fatalf("browser was asked %s", asked.raw)
	}
	withdrawn := false
	for _, m := range before {
		if m.Method == "$/cancel_request" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m.Params, &p)
			withdrawn = withdrawn || string(p.RequestID) == string(asked.ID)
		}
	}
	if !withdrawn {
		t.Fatalf("no $/cancel_request for %s in %v", asked.ID, kinds(before))
	}
	cl.send(map[string]any{"jsonrpc": "2.0", "id": asked.ID, "result": map[string]any{"content": "late"}})
	cl.mustResult("session/list", map[string]any{}, nil) // the socket is fine
}

// TestFSClientDisconnect: a request pending at the client fails when its socket closes; the delegation is
// released and the gateway serves the next request.
func TestFSClientDisconnect(t *testing.T) {
	e := fsEnv(t, Options{})
	a := e.dialOnly("/acp/fs")
	a.initFS(true, true)
	sid := a.newSession(e.dir)
	watcher := e.dial("/acp/fs")
	watcher.initFS(false, false)
	watcher.mustResult("session/resume", map[string]any{"sessionId": sid, "cwd": e.dir}, nil)

	a.request("session/prompt", textPrompt(sid, "read "+e.dir+"/a.txt"))
	for m := a.next(); m.Method != "fs/read_text_file"; m = a.next() {
	}
	a.c.CloseNow()
	var seen []msg
	for agentText(seen) == "" {
		seen = append(seen, watcher.next())
	}
	if got := agentText(seen); got != "err -32603\n" {
		t.Fatalf("agent saw %q", got)
	}
	// Wait for the turn's end before the next prompt.
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the turn to end", func() bool { return s.Status() == store.StatusIdle })
	if got := runScript(t, watcher, sid, "read "+e.dir+"/a.txt", noRequests(t)); got != "ok \"from disk\"\n" {
		t.Fatalf("after the fs client left, agent saw %q", got)
	}
}

// TestFSHandover: the fs client that attached last serves; when it leaves, the one before it (still
// attached) takes over; with none left, the gateway serves.
func TestFSHandover(t *testing.T) {
	e := fsEnv(t, Options{})
	first := e.dial("/acp/fs")
	first.initFS(true, true)
	sid := first.newSession(e.dir)
	second := e.dial("/acp/fs")
	second.initFS(true, false)
	second.mustResult("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)

	b2 := &browser{t: t, cl: second}
	if got := runScript(t, second, sid, "read "+e.dir+"/a.txt", b2.onRequest); got != "ok \"from browser\"\n" || len(b2.methods()) != 1 {
		t.Fatalf("second client: agent saw %q, asked %v", got, b2.methods())
	}
	// first sees the turn's updates too; drain them.
	for m := first.next(); m.update() != "agent_message_chunk"; m = first.next() {
	}

	second.c.CloseNow()
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	// The socket withdraws its offer before it stops counting as a subscriber.
	waitFor(t, "the second client's release", func() bool { return s.View().Clients == 1 })
	b1 := &browser{t: t, cl: first}
	if got := runScript(t, first, sid, "read "+e.dir+"/a.txt\nwrite "+e.dir+"/b.txt hi", b1.onRequest); got != "ok \"from browser\"\nerr -32000\n" || len(b1.methods()) != 2 {
		t.Fatalf("after the handover: agent saw %q, first was asked %v", got, b1.methods())
	}
}

package acpws

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/ws"
	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(cleanupM{m}, goleak.IgnoreTopFunction("github.com/acp-gateway/gateway/internal/agents.spawner"))
}

// cleanupM removes what the tests built once they have run.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	code := c.m.Run()
	if testAgentDir != "" {
		os.RemoveAll(testAgentDir)
	}
	return code
}

const stepTimeout = 15 * time.Second

// env is a registry with the built-in demo agent (Delay 0) behind both the `/acp` face and the
// `/v1/sessions/{id}/ws` face, on a real HTTP server.
type env struct {
	t    testing.TB
	reg  *sessions.Registry
	acp  *Handler
	ws   *ws.Handler
	srv  *httptest.Server
	base string // ws://host:port
	dir  string

	observers []*client // closed only after the faces shut down
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	return newEnvCfg(t, opts, sessions.Config{})
}

// newEnvCfg is newEnv with registry settings (Workdir and Logger are filled in) and, optionally, agents
// besides "demo" and "other".
func newEnvCfg(t testing.TB, opts Options, cfg sessions.Config, extra ...agents.Spec) *env {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	spec := func(name string) agents.Spec {
		return agents.Spec{Name: name, Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
			return demo.Serve(ctx, demo.Options{}, in, out)
		}}
	}
	dir := t.TempDir()
	cfg.Workdir, cfg.Logger, cfg.CancelGrace, cfg.StopGrace = dir, logger, 5*time.Second, time.Second
	reg, err := sessions.NewRegistry(cfg,
		append([]agents.Spec{spec("demo"), spec("other")}, extra...), "demo")
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = logger
	e := &env{t: t, reg: reg, dir: dir}
	e.acp = NewHandler(reg, opts)
	// The session face shares the socket readers' inbound budget and read limit, as in the gateway.
	e.ws = ws.NewHandler(reg, ws.Options{Logger: logger, Inbound: opts.Inbound, ReadLimit: opts.ReadLimit})
	mux := http.NewServeMux()
	// Every method reaches the face: it answers 405 itself for the ones it does not serve.
	mux.Handle("/acp", e.acp)
	mux.HandleFunc("/acp/{agent}", func(w http.ResponseWriter, r *http.Request) { e.acp.ServeAgent(w, r, r.PathValue("agent")) })
	mux.HandleFunc("GET /v1/sessions/{id}/ws", func(w http.ResponseWriter, r *http.Request) { e.ws.ServeSession(w, r, r.PathValue("id")) })
	e.srv = httptest.NewServer(mux)
	e.base = "ws" + strings.TrimPrefix(e.srv.URL, "http")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// Observers keep reading so the faces' close handshakes complete.
		var drained sync.WaitGroup
		for _, o := range e.observers {
			drained.Go(func() {
				for {
					if _, _, err := o.c.Read(ctx); err != nil {
						return
					}
				}
			})
		}
		_ = e.acp.Shutdown(ctx)
		_ = e.ws.Shutdown(ctx)
		for _, o := range e.observers {
			o.c.CloseNow()
		}
		drained.Wait()
		e.srv.Close()
		if err := reg.Shutdown(ctx); err != nil {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Errorf("registry shutdown: %v\n%s", err, buf[:n])
		}
	})
	return e
}

// msg is any JSON-RPC message the gateway sends.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw []byte
}

func (m msg) isResponse() bool { return m.Method == "" }

// update returns the sessionUpdate kind of a session/update notification ("" otherwise).
func (m msg) update() string {
	if m.Method != "session/update" {
		return ""
	}
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
		} `json:"update"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Update.SessionUpdate
}

func (m msg) sessionID() string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.SessionID
}

// client is a raw WebSocket ACP client for tests.
type client struct {
	t      testing.TB
	c      *websocket.Conn
	nextID int
}

func (e *env) dial(path string) *client {
	e.t.Helper()
	cl := e.dialOnly(path)
	e.t.Cleanup(func() { cl.c.CloseNow() })
	return cl
}

// dialObserver dials a `/v1/sessions/{id}/ws` observer that keeps reading until the faces have shut down
// (their close handshakes complete) and is closed after.
func (e *env) dialObserver(path string) *client {
	e.t.Helper()
	cl := e.dialOnly(path)
	e.observers = append(e.observers, cl)
	return cl
}

func (e *env) dialOnly(path string) *client {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, e.base+path, nil)
	if err != nil {
		e.t.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(64 << 20)
	return &client{t: e.t, c: c}
}

func (cl *client) sendRaw(typ websocket.MessageType, b []byte) {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := cl.c.Write(ctx, typ, b); err != nil {
		cl.t.Fatalf("write: %v", err)
	}
}

func (cl *client) send(v any) {
	cl.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		cl.t.Fatal(err)
	}
	cl.sendRaw(websocket.MessageText, b)
}

// request sends a request and returns its id.
func (cl *client) request(method string, params any) json.RawMessage {
	cl.t.Helper()
	cl.nextID++
	cl.send(map[string]any{"jsonrpc": "2.0", "id": cl.nextID, "method": method, "params": params})
	id, _ := json.Marshal(cl.nextID)
	return id
}

func (cl *client) notify(method string, params any) {
	cl.t.Helper()
	cl.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// next reads the next message.
func (cl *client) next() msg {
	cl.t.Helper()
	m, err := cl.tryNext(stepTimeout)
	if err != nil {
		cl.t.Fatalf("read: %v", err)
	}
	return m
}

func (cl *client) tryNext(d time.Duration) (msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	typ, b, err := cl.c.Read(ctx)
	if err != nil {
		return msg{}, err
	}
	if typ != websocket.MessageText {
		return msg{}, errors.New("binary frame from the gateway")
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		return msg{}, err
	}
	m.raw = b
	return m, nil
}

// until reads until the response with id and returns it with every message read before it. onRequest, when
// not nil, is called for each request from the gateway (it may answer).
func (cl *client) until(id json.RawMessage, onRequest func(msg)) (before []msg, resp msg) {
	cl.t.Helper()
	for {
		m := cl.next()
		if m.isResponse() && string(m.ID) == string(id) {
			return before, m
		}
		if m.Method != "" && m.ID != nil && onRequest != nil {
			onRequest(m)
		}
		before = append(before, m)
	}
}

// call sends a request and returns its response, failing on messages other than notifications.
func (cl *client) call(method string, params any) (before []msg, resp msg) {
	cl.t.Helper()
	return cl.until(cl.request(method, params), nil)
}

// mustResult calls and fails the test on an error response.
func (cl *client) mustResult(method string, params any, out any) []msg {
	cl.t.Helper()
	before, resp := cl.call(method, params)
	if resp.Error != nil {
		cl.t.Fatalf("%s: error %d %s %s", method, resp.Error.Code, resp.Error.Message, resp.Error.Data)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			cl.t.Fatalf("%s: result %s: %v", method, resp.Result, err)
		}
	}
	return before
}

func (cl *client) answer(m msg, optionID string) {
	cl.t.Helper()
	cl.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}})
}

// initialize runs initialize and returns its result.
func (cl *client) initialize() map[string]any {
	cl.t.Helper()
	var res map[string]any
	cl.mustResult("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &res)
	return res
}

// newSession runs session/new and returns the session id and the messages that arrived before the response.
func (cl *client) newSession(cwd string) string {
	cl.t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	cl.mustResult("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &res)
	if res.SessionID == "" {
		cl.t.Fatal("session/new: no sessionId")
	}
	return res.SessionID
}

func textPrompt(sid, text string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

func kinds(ms []msg) []string {
	var out []string
	for _, m := range ms {
		switch {
		case m.Method == "session/update":
			out = append(out, m.update())
		case m.Method != "":
			out = append(out, m.Method)
		default:
			out = append(out, "response")
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

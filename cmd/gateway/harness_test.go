package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/acpschema"
	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// exampleAgent is the acp-go-sdk example agent, built once for the package as a real stdio subprocess;
// eventsAgent is the repository's example agent for the native event dialect.
var exampleAgent, eventsAgent string

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgsEnv); args != "" {
		os.Exit(runChild(args)) // a gateway the test runs as a process of its own (datadir_kill_e2e_test.go)
	}
	dir, err := os.MkdirTemp("", "gateway-test-")
	if err != nil {
		panic(err)
	}
	exampleAgent = filepath.Join(dir, "example-agent")
	out, err := exec.Command("go", "build", "-o", exampleAgent, "github.com/coder/acp-go-sdk/example/agent").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the SDK example agent: %v\n%s", err, out)
		os.Exit(1)
	}
	eventsAgent = filepath.Join(dir, "events-agent")
	if out, err := exec.Command("go", "build", "-o", eventsAgent, "github.com/acp-gateway/gateway/examples/events-agent").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the events example agent: %v\n%s", err, out)
		os.Exit(1)
	}
	// Every REST response a test receives must be one openapi.yaml describes.
	http.DefaultClient.Transport = contractTransport{next: http.DefaultTransport}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		// Every gateway the tests ran has shut down: none of its goroutines may be left.
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// gateway is one `run` under test.
type gateway struct {
	t      *testing.T
	base   string // http://127.0.0.1:port
	cancel context.CancelFunc
	done   chan error
	logs   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listenRE = regexp.MustCompile(`msg="gateway listening" addr=(\S+)`)

// startGateway runs the gateway on a free loopback port with the given extra flags and stops it at cleanup.
func startGateway(t *testing.T, args ...string) *gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &gateway{t: t, cancel: cancel, done: make(chan error, 1), logs: &syncBuffer{}}
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir()}, args...)
	getenv := func(string) string { return "" }
	go func() { g.done <- run(ctx, full, getenv, io.Discard, g.logs) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := listenRE.FindStringSubmatch(g.logs.String()); m != nil {
			g.base = "http://" + m[1]
			break
		}
		select {
		case err := <-g.done:
			t.Fatalf("gateway exited: %v\n%s", err, g.logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if g.base == "" {
		t.Fatalf("gateway did not log its address:\n%s", g.logs.String())
	}
	t.Cleanup(func() { g.stop() })
	return g
}

// stop shuts the gateway down like SIGINT would and waits for run to return.
func (g *gateway) stop() error {
	g.cancel()
	select {
	case err := <-g.done:
		g.done <- err
		return err
	case <-time.After(30 * time.Second):
		g.t.Errorf("gateway did not stop within 30s\n%s", g.logs.String())
		return nil
	}
}

// do sends a JSON request and decodes the JSON answer into out (when not nil). It returns the status.
func (g *gateway) do(method, path string, body any, out any) int {
	g.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, g.base+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			g.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

type sessionJSON struct {
	ID                 string                   `json:"id"`
	Agent              string                   `json:"agent"`
	Cwd                string                   `json:"cwd"`
	Status             string                   `json:"status"`
	Epoch              string                   `json:"epoch"`
	LastSeq            uint64                   `json:"lastSeq"`
	Modes              json.RawMessage          `json:"modes"`
	ConfigOptions      json.RawMessage          `json:"configOptions"`
	AgentInfo          json.RawMessage          `json:"agentInfo"`
	CurrentTurn        *struct{ TurnID string } `json:"currentTurn"`
	PendingPermissions []struct {
		ID      string `json:"id"`
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	} `json:"pendingPermissions"`
}

func (g *gateway) createSession(body any) sessionJSON {
	g.t.Helper()
	var s sessionJSON
	if code := g.do("POST", "/v1/sessions", body, &s); code != http.StatusCreated {
		g.t.Fatalf("create session: %d %+v\n%s", code, s, g.logs.String())
	}
	return s
}

// frame is one message received on a session socket.
type frame struct {
	Raw    json.RawMessage
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID  string          `json:"sessionId"`
		Update     json.RawMessage `json:"update"`
		TurnID     string          `json:"turnId"`
		StopReason string          `json:"stopReason"`
		Reason     string          `json:"reason"`
		Meta       struct {
			Gateway struct {
				Seq          uint64 `json:"seq"`
				Epoch        string `json:"epoch"`
				TurnID       string `json:"turnId"`
				PermissionID string `json:"permissionId"`
			} `json:"gateway"`
		} `json:"_meta"`
	} `json:"params"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func (f frame) updateKind() string {
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		ToolCallID    string `json:"toolCallId"`
		Status        string `json:"status"`
	}
	_ = json.Unmarshal(f.Params.Update, &u)
	return u.SessionUpdate
}

// wsClient collects every frame of one socket on its own goroutine.
type wsClient struct {
	t      *testing.T
	c      *websocket.Conn
	mu     sync.Mutex
	frames []frame
	notify chan struct{}
	closed chan struct{}
	status websocket.StatusCode
	reason string // the close frame's reason; guarded by mu
}

func (g *gateway) dial(path string) *wsClient {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, strings.Replace(g.base, "http", "ws", 1)+path, nil)
	if err != nil {
		g.t.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(64 << 20)
	w := &wsClient{t: g.t, c: c, notify: make(chan struct{}, 1), closed: make(chan struct{}), status: -1}
	go w.readLoop()
	g.t.Cleanup(func() { c.CloseNow(); <-w.closed })
	return w
}

func (w *wsClient) readLoop() {
	defer close(w.closed)
	for {
		_, data, err := w.c.Read(context.Background())
		if err != nil {
			w.mu.Lock()
			w.status = websocket.CloseStatus(err)
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				w.reason = ce.Reason
			}
			w.mu.Unlock()
			return
		}
		// A browser fails the socket on a text frame that is not UTF-8 (RFC 6455 §8.1): so does this client.
		if !utf8.Valid(data) {
			w.t.Errorf("frame is not valid UTF-8: %q", data)
		}
		// Every frame the gateway sends a client is valid ACP JSON-RPC: agent traffic against the schema agents
		// speak (unstable), the gateway's own `_gateway/*` frames by their envelope.
		if err := acpschema.ValidateFrame(acpschema.Unstable, data); err != nil {
			w.t.Errorf("frame fails the ACP schema: %v\n%s", err, data)
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			w.t.Errorf("non-JSON frame %q", data)
			continue
		}
		f.Raw = append(json.RawMessage(nil), data...)
		w.mu.Lock()
		w.frames = append(w.frames, f)
		w.mu.Unlock()
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
}

// waitFor waits until pred holds for some frame and returns it (and its index).
func (w *wsClient) waitFor(what string, pred func(f frame) bool) (frame, int) {
	w.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		for i, f := range w.frames {
			if pred(f) {
				w.mu.Unlock()
				return f, i
			}
		}
		w.mu.Unlock()
		select {
		case <-w.notify:
		case <-w.closed:
			w.mu.Lock()
			for i, f := range w.frames {
				if pred(f) {
					w.mu.Unlock()
					return f, i
				}
			}
			w.mu.Unlock()
			w.t.Fatalf("socket closed (%d) before %s; frames:\n%s", w.status, what, w.dump())
		case <-deadline:
			w.t.Fatalf("timed out waiting for %s; frames:\n%s", what, w.dump())
		}
	}
}

func (w *wsClient) waitClosed() websocket.StatusCode {
	w.t.Helper()
	select {
	case <-w.closed:
	case <-time.After(30 * time.Second):
		w.t.Fatal("socket not closed")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// closeReason is the reason of the close frame that ended the socket ("" before it closed).
func (w *wsClient) closeReason() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

func (w *wsClient) snapshot() []frame {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]frame(nil), w.frames...)
}

func (w *wsClient) dump() string {
	var b strings.Builder
	for _, f := range w.snapshot() {
		b.Write(f.Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

func (w *wsClient) send(v any) {
	w.t.Helper()
	raw, _ := json.Marshal(v)
	if err := w.c.Write(context.Background(), websocket.MessageText, raw); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

func turnEnded(turnID string) func(f frame) bool {
	return func(f frame) bool { return f.Method == "_gateway/turn_ended" && f.Params.TurnID == turnID }
}

func isPermissionRequest(f frame) bool { return f.Method == "session/request_permission" }

// checkContiguous asserts the logged frames (those with a seq) are exactly 1..n in order, once each.
func checkContiguous(t *testing.T, frames []frame, from uint64) uint64 {
	t.Helper()
	next := from
	for _, f := range frames {
		seq := f.Params.Meta.Gateway.Seq
		if seq == 0 {
			continue
		}
		if seq != next {
			t.Fatalf("seq %d, want %d", seq, next)
		}
		next++
	}
	return next - 1
}

// lines returns the text of the scanner's lines; for logs in failures.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

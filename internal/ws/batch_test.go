package ws

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/testnet"
	"github.com/coder/websocket"
)

// faceEnv is the WebSocket face of a registry with the built-in demo agent, on a real HTTP server whose
// connections count their writes.
type faceEnv struct {
	reg  *sessions.Registry
	h    *Handler
	lis  *testnet.WriteCountingListener
	base string
}

func newFaceEnv(t *testing.T, opts Options) *faceEnv {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	reg, err := sessions.NewRegistry(sessions.Config{Workdir: t.TempDir(), Logger: logger, CancelGrace: time.Second, StopGrace: time.Second},
		[]agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = logger
	h := NewHandler(reg, opts)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeSession(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/sessions/"), "/ws"))
	}))
	lis := &testnet.WriteCountingListener{Listener: srv.Listener}
	srv.Listener = lis
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h.Drain()
		_ = h.Shutdown(ctx)
		srv.Close()
		if err := reg.Shutdown(ctx); err != nil {
			t.Errorf("registry shutdown: %v", err)
		}
	})
	return &faceEnv{reg: reg, h: h, lis: lis, base: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// waitForCommands waits until the demo agent's available_commands_update, which it sends on its own after
// session/new, is in s's log: nothing else arrives unasked after it.
func waitForCommands(t *testing.T, s *sessions.Session) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res, err := s.Log().Read(0, 256, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Entries {
			if strings.Contains(string(e.Frame), "available_commands_update") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo agent never sent its commands")
		}
	}
}

// appendFrames logs n notifications in s, as an agent's updates would be.
func appendFrames(t *testing.T, s *sessions.Session, n int) {
	t.Helper()
	for i := range n {
		if _, err := s.Log().Append(eventlog.KindUpdate, func(seq uint64) ([]byte, error) {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"test/frame","params":{"i":%d,"seq":%d,"pad":"%s"}}`, i, seq, strings.Repeat("x", 64)), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// readUntil reads messages until one has method, bounded by the context.
func readUntil(ctx context.Context, t *testing.T, c *websocket.Conn, method string) (frames int) {
	t.Helper()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read (after %d test frames) waiting for %s: %v", frames, method, err)
		}
		var m struct{ Method string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("frame %s: %v", b, err)
		}
		if m.Method == "test/frame" {
			frames++
		}
		if m.Method == method {
			return frames
		}
	}
}

// TestReadyFramesLeaveInFewerWrites: a client that connects to a log of N frames gets them all, one
// WebSocket message each, in fewer than N write(2)s; and a single frame appended once it has caught up
// reaches it with nothing else happening: no frame waits for more.
func TestReadyFramesLeaveInFewerWrites(t *testing.T) {
	e := newFaceEnv(t, Options{PingInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.reg.Create(ctx, sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForCommands(t, s)
	const n = 200
	appendFrames(t, s, n)

	before := e.lis.Writes.Load()
	c, _, err := websocket.Dial(ctx, e.base+"/v1/sessions/"+s.ID+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if got := readUntil(ctx, t, c, "_gateway/replay_complete"); got != n {
		t.Fatalf("replay brought %d test frames, want %d", got, n)
	}
	replayWrites := e.lis.Writes.Load() - before // the handshake's response included
	t.Logf("%d frames (and the log's own) in %d writes", n, replayWrites)
	if replayWrites >= n {
		t.Fatalf("%d ready frames took %d writes, want fewer than %d", n, replayWrites, n)
	}

	// The subscriber's presence follows the replay (docs/websocket.md).
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), `"method":"_gateway/presence"`) {
		t.Fatalf("after the replay: %s %v, want _gateway/presence", b, err)
	}

	// Caught up: one more frame must go out on its own, without a later frame, ping or close to push it.
	before = e.lis.Writes.Load()
	appendFrames(t, s, 1)
	one, cancelOne := context.WithTimeout(ctx, 10*time.Second)
	defer cancelOne()
	_, b, err := c.Read(one)
	if err != nil {
		t.Fatalf("a single frame was held back: %v", err)
	}
	if !strings.Contains(string(b), `"method":"test/frame"`) {
		t.Fatalf("got %s, want the appended frame", b)
	}
	if got := e.lis.Writes.Load() - before; got != 1 {
		t.Fatalf("one frame took %d writes", got)
	}
}

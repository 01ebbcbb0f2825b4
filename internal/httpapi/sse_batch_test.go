package httpapi

import (
	"bufio"
	"context"
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
)

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

// TestSSEReadyFramesLeaveInFewerWrites: an event stream that starts on a log of N frames gets them all, one
// event each, in a few write(2)s; a single frame appended once it has caught up reaches it with
// nothing else happening (no heartbeat: one per hour).
func TestSSEReadyFramesLeaveInFewerWrites(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	reg, err := sessions.NewRegistry(sessions.Config{Workdir: t.TempDir(), Logger: logger, CancelGrace: time.Second, StopGrace: time.Second},
		[]agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	api := &Server{Registry: reg, Logger: logger, SSEHeartbeat: time.Hour}
	srv := httptest.NewUnstartedServer(api.Handler())
	lis := &testnet.WriteCountingListener{Listener: srv.Listener}
	srv.Listener = lis
	srv.Start()
	defer func() {
		api.EndStreams()
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := reg.Shutdown(ctx); err != nil {
			t.Errorf("registry shutdown: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := reg.Create(ctx, sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForCommands(t, s)
	const n = 200
	appendOne := func(i int) {
		if _, err := s.Log().Append(eventlog.KindUpdate, func(seq uint64) ([]byte, error) {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"test/frame","params":{"i":%d,"pad":"%s"}}`, i, strings.Repeat("x", 64)), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		appendOne(i)
	}

	before := lis.Writes.Load()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/sessions/"+s.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") {
				select {
				case lines <- l:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	next := func(wait time.Duration) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			return l
		case <-time.After(wait):
			t.Fatal("no event within the wait: a frame was held back")
		}
		return ""
	}
	frames := 0
	for {
		l := next(20 * time.Second)
		if strings.Contains(l, `"method":"test/frame"`) {
			frames++
		}
		if strings.Contains(l, "_gateway/replay_complete") {
			break
		}
	}
	if frames != n {
		t.Fatalf("replay brought %d test frames, want %d", frames, n)
	}
	replayWrites := lis.Writes.Load() - before
	t.Logf("%d events (and the log's own) in %d writes", n, replayWrites)
	// About 30 KB of events: the response's own buffers would send them 2–4 KiB at a time (9 writes before
	// frameout.HeldWriter); held, they leave in one Write of the handler.
	if replayWrites > 5 {
		t.Fatalf("%d ready frames took %d writes, want at most 5", n, replayWrites)
	}
	if l := next(10 * time.Second); !strings.Contains(l, `"method":"_gateway/presence"`) { // follows the replay
		t.Fatalf("got %s after the replay, want _gateway/presence", l)
	}
	appendOne(n)
	if l := next(10 * time.Second); !strings.Contains(l, `"method":"test/frame"`) {
		t.Fatalf("got %s, want the appended frame", l)
	}
}

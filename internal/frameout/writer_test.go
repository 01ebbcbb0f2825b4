package frameout

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peers returns both ends of a WebSocket on a loopback test server, closed at cleanup.
func peers(t *testing.T) (server, client *websocket.Conn) {
	t.Helper()
	s, _, c := heldPeers(t)
	return s, c
}

// heldPeers is peers with the server's end on a HeldConn, as the faces accept it.
func heldPeers(t *testing.T) (server *websocket.Conn, held *HeldConn, client *websocket.Conn) {
	t.Helper()
	type accept struct {
		c    *websocket.Conn
		held *HeldConn
	}
	accepted := make(chan accept, 1)
	released := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, held, err := Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- accept{c, held}
		<-released // a hijacked request's context never ends: the test says when
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) })
	cc, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.CloseNow() })
	a := <-accepted
	t.Cleanup(func() { a.c.CloseNow() })
	return a.c, a.held, cc
}

// writeUntilError writes frames to c through w on its own goroutine until one fails.
func writeUntilError(w *Writer, c *websocket.Conn) <-chan error {
	frame := []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
	done := make(chan error, 1)
	go func() {
		for {
			if err := w.Write(len(frame), func() error { return c.Write(context.Background(), websocket.MessageText, frame) }); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

// TestWriteWatchdogEndsStuckWrite: frames are written without a context, so the watchdog must end a write
// the peer never drains, after timeout/2..timeout.
// The drop counts as an eviction of the face.
func TestWriteWatchdogEndsStuckWrite(t *testing.T) {
	const wt = 400 * time.Millisecond
	c, _ := peers(t) // the client never reads
	m := metrics.New(nil)
	w := Start(context.Background(), wt, m.Face("ws"), func() { c.CloseNow() })
	defer w.Stop()
	select {
	case <-writeUntilError(w, c):
	case <-time.After(20 * wt):
		t.Fatal("a write the peer never drains was not ended")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `gateway_slow_client_evictions_total{face="ws"} 1`; !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("metrics lack %s", want)
	}
}

// TestWriteEndsWhenContextEnds: a write blocked on the peer ends when the connection's context does.
func TestWriteEndsWhenContextEnds(t *testing.T) {
	c, _ := peers(t) // the client never reads
	ctx, cancel := context.WithCancel(context.Background())
	w := Start(ctx, time.Hour, nil, func() { c.CloseNow() })
	defer w.Stop()
	done := writeUntilError(w, c)
	for deadline := time.Now().Add(10 * time.Second); !w.writing() || w.started.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the writer never started writing")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked write outlived its context")
	}
}

// TestWriteWatchdogLeavesHealthyWritesAlone: a peer that reads keeps its connection however long it lasts.
func TestWriteWatchdogLeavesHealthyWritesAlone(t *testing.T) {
	c, cc := peers(t)
	go func() {
		for {
			if _, _, err := cc.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	const wt = 100 * time.Millisecond
	w := Start(context.Background(), wt, nil, func() { c.CloseNow() })
	defer w.Stop()
	frame := []byte(`{"jsonrpc":"2.0","method":"x"}`)
	for end := time.Now().Add(6 * wt); time.Now().Before(end); {
		if err := w.Write(len(frame), func() error { return c.Write(context.Background(), websocket.MessageText, frame) }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // pacing, not synchronisation
	}
}

// TestWriteWatchdogEndsStuckFlush: with batching, what blocks on a peer that never reads may be the flush of
// held frames rather than a frame's own write; the watchdog must end it the same way.
func TestWriteWatchdogEndsStuckFlush(t *testing.T) {
	const wt = 400 * time.Millisecond
	c, held, _ := heldPeers(t) // the client never reads
	w := Start(context.Background(), wt, nil, func() { c.CloseNow() }).Batch(held)
	defer w.Stop()
	frame := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	done := make(chan error, 1)
	go func() {
		for {
			for range 8 {
				if err := w.Write(len(frame), func() error { return c.Write(context.Background(), websocket.MessageText, frame) }); err != nil {
					done <- err
					return
				}
			}
			if err := w.Flush(); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * wt):
		t.Fatal("a flush the peer never drains was not ended")
	}
}

// TestHeldFramesArriveAsMessages: frames held and flushed together reach the peer as one message each, in
// order (a pong while frames are held: TestPingAnsweredWhileHolding).
func TestHeldFramesArriveAsMessages(t *testing.T) {
	c, held, cc := heldPeers(t)
	go func() { // the server's reader answers pings
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	w := Start(context.Background(), 10*time.Second, nil, func() { c.CloseNow() }).Batch(held)
	defer w.Stop()
	const n = 50
	received := make(chan string, n)
	readErr := make(chan error, 1)
	go func() {
		for range n {
			_, b, err := cc.Read(context.Background())
			if err != nil {
				readErr <- err
				return
			}
			received <- string(b)
		}
	}()
	for i := range n {
		frame := []byte(`{"i":` + strconv.Itoa(i) + `}`)
		if err := w.Write(len(frame), func() error { return c.Write(context.Background(), websocket.MessageText, frame) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		select {
		case b := <-received:
			if want := `{"i":` + strconv.Itoa(i) + `}`; b != want {
				t.Fatalf("message %d is %s, want %s", i, b, want)
			}
		case err := <-readErr:
			t.Fatal(err)
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d never arrived", i)
		}
	}
}

// endingCtx is a context that ends while the writer looks at it (its first Err), and whose end the writer
// hears at once: onEnd is the writer's AfterFunc, run before that Err returns.
type endingCtx struct {
	context.Context // Background: never done by itself
	ended           bool
	onEnd           func()
}

func (c *endingCtx) Err() error {
	if c.ended {
		return context.Canceled
	}
	c.ended = true
	c.onEnd()
	return nil
}

// TestWriteAbortedWhenContextEndsAsItStarts: a context that ends as a write starts (after Run looked at it,
// before the write was counted as begun) must still abort that write; only the watchdog ended it, after
// timeout/2..timeout.
func TestWriteAbortedWhenContextEndsAsItStarts(t *testing.T) {
	ctx := &endingCtx{Context: context.Background()}
	aborted := false
	w := Start(ctx, time.Hour, nil, func() { aborted = true })
	defer w.Stop()
	ctx.onEnd = w.ctxEnded
	wrote := false
	err := w.Run(func() error { wrote = true; return nil })
	if wrote && !aborted {
		t.Fatalf("a write began after its context ended and nothing aborted it (Run: %v)", err)
	}
}

// TestPingAnsweredWhileHolding: a client's ping is answered while the face holds frames it has not flushed
// (a writer behind a flood flushes only once it catches up); the pong waited for the face's next flush.
func TestPingAnsweredWhileHolding(t *testing.T) {
	c, held, cc := heldPeers(t)
	go func() { // the server's reader answers pings
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	w := Start(context.Background(), time.Hour, nil, func() { c.CloseNow() }).Batch(held)
	defer w.Stop()
	frame := []byte(`{"held":true}`)
	if err := w.Write(len(frame), func() error { return c.Write(context.Background(), websocket.MessageText, frame) }); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() { // the client's reader takes the frame and, behind it, the pong
		for {
			_, b, err := cc.Read(context.Background())
			if err != nil {
				return
			}
			got <- string(b)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a bound for a failing run, not a timing
	defer cancel()
	if err := cc.Ping(ctx); err != nil {
		t.Fatalf("ping while the face holds a frame: %v", err)
	}
	if b := <-got; b != string(frame) {
		t.Fatalf("the held frame arrived as %q", b)
	}
}

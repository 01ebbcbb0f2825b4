package frameout

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	accepted := make(chan *websocket.Conn, 1)
	released := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- c
		<-released // a hijacked request's context never ends: the test says when
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) })
	cc, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.CloseNow() })
	c := <-accepted
	t.Cleanup(func() { c.CloseNow() })
	return c, cc
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

package ws

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// stuckPeer returns the server side of a WebSocket whose client never reads, so writes block once the
// socket buffers are full.
func stuckPeer(t *testing.T) *websocket.Conn {
	t.Helper()
	server, _ := peers(t)
	return server
}

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

// TestWriteWatchdogEndsStuckWrite: frames are written without a context, so the watchdog must end a write
// the peer never drains, after WriteTimeout/2..WriteTimeout.
func TestWriteWatchdogEndsStuckWrite(t *testing.T) {
	const wt = 400 * time.Millisecond
	cl := &client{h: &Handler{opts: Options{WriteTimeout: wt}.withDefaults()}, c: stuckPeer(t)}
	stop := cl.startWriter(context.Background())
	defer stop()
	frame := []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
	done := make(chan error, 1)
	go func() {
		for {
			if err := cl.write(frame); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * wt):
		t.Fatal("a write the peer never drains was not ended")
	}
}

// TestWriteEndsWhenContextEnds: a write blocked on the peer ends when the connection's context does.
func TestWriteEndsWhenContextEnds(t *testing.T) {
	cl := &client{h: &Handler{opts: Options{WriteTimeout: time.Hour}.withDefaults()}, c: stuckPeer(t)}
	ctx, cancel := context.WithCancel(context.Background())
	stop := cl.startWriter(ctx)
	defer stop()
	frame := []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
	done := make(chan error, 1)
	go func() {
		for {
			if err := cl.write(frame); err != nil {
				done <- err
				return
			}
		}
	}()
	for !cl.writing() || cl.wstarted.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the writer block on the full socket
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
	cl := &client{h: &Handler{opts: Options{WriteTimeout: wt}.withDefaults()}, c: c}
	stop := cl.startWriter(context.Background())
	defer stop()
	for end := time.Now().Add(6 * wt); time.Now().Before(end); {
		if err := cl.write([]byte(`{"jsonrpc":"2.0","method":"x"}`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
}

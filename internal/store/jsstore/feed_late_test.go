package jsstore_test

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A live feed whose server still holds its pull goes on through a silence past the heartbeat bound, as on a
// busy machine where the process reads late: no stall is counted and the next frame arrives on the same read.
func TestFeedWaitsOutALateRead(t *testing.T) {
	srv := natstest.Embedded(t)
	gate := &lateGate{srv: srv, released: make(chan struct{}), infoSeen: make(chan struct{})}
	st, err := jsstore.Open(ctxT(t), srv.Connect(nats.InProcessServer(gate)), jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writer := open(t, srv, jsstore.Options{})

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	frames := make(chan store.StoredFrame, 4)
	caught, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- st.Follow(ctx, "s1", func(f store.StoredFrame) error { frames <- f; return nil }, func() { close(caught) })
	}()
	select {
	case <-caught:
	case err := <-done:
		t.Fatalf("Follow before catching up: %v", err)
	}

	gate.hold() // the server's bytes wait until the feed asks the server about its consumer
	select {
	case <-gate.infoSeen:
		gate.release()
	case err := <-done:
		t.Fatalf("the feed ended in the silence: %v (stalls %d)", err, st.FeedStalls())
	}

	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 10})
	p := writer.Persist("s1", "e1", l, 0)
	defer p.Stop()
	appendFrames(t, l, 1, 1, never)
	flush(t, p)
	select {
	case f := <-frames:
		if f.Seq != 1 {
			t.Fatalf("fed seq %d, want 1", f.Seq)
		}
	case err := <-done:
		t.Fatalf("Follow ended before the next frame: %v", err)
	}
	if n := st.FeedStalls(); n != 0 {
		t.Fatalf("FeedStalls() = %d after a late read, want 0", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow: %v", err)
	}
}

// lateGate connects in process and, once held, keeps the server's bytes from the client until released: the
// client reads late. It notes the client's first consumer-info request made while held.
type lateGate struct {
	srv      *natstest.Server
	mu       sync.Mutex
	held     bool
	released chan struct{}
	infoSeen chan struct{}
	infoOnce sync.Once
}

func (g *lateGate) InProcessConn() (net.Conn, error) {
	c, err := g.srv.InProcessConn()
	if err != nil {
		return nil, err
	}
	return &lateConn{Conn: c, g: g}, nil
}

func (g *lateGate) hold() {
	g.mu.Lock()
	g.held = true
	g.mu.Unlock()
}

func (g *lateGate) release() { close(g.released) }

// waitIfHeld blocks a read of the server's bytes while the gate is held.
func (g *lateGate) waitIfHeld() {
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	if held {
		<-g.released
	}
}

type lateConn struct {
	net.Conn
	g *lateGate
}

func (c *lateConn) Read(p []byte) (int, error) {
	c.g.waitIfHeld()
	return c.Conn.Read(p)
}

func (c *lateConn) Write(p []byte) (int, error) {
	c.g.mu.Lock()
	held := c.g.held
	c.g.mu.Unlock()
	if held && bytes.Contains(p, []byte("CONSUMER.INFO")) {
		c.g.infoOnce.Do(func() { close(c.g.infoSeen) })
	}
	return c.Conn.Write(p)
}

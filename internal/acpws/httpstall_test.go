package acpws

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/inbound"
)

// stalledWriter is the response of an SSE receiver whose client stopped reading: the headers go out, every
// body write blocks until the handler expires its write deadline (as a full TCP window does).
type stalledWriter struct {
	header  http.Header
	expired chan struct{} // closed by SetWriteDeadline
	once    sync.Once
	wrote   chan struct{} // closed at the first body write
	wOnce   sync.Once
}

func (s *stalledWriter) Header() http.Header { return s.header }
func (s *stalledWriter) WriteHeader(int)     {}
func (s *stalledWriter) Flush()              {}
func (s *stalledWriter) Write(b []byte) (int, error) {
	s.wOnce.Do(func() { close(s.wrote) })
	<-s.expired
	return 0, errors.New("write deadline exceeded")
}
func (s *stalledWriter) SetWriteDeadline(time.Time) error {
	s.once.Do(func() { close(s.expired) })
	return nil
}

// A session stream whose receiver stops reading: its write is ended by the frame writer's watchdog after
// WriteTimeout, the frames then wait for a receiver at most QueueBytes, and the writer waiting for room ends
// the connection after WriteTimeout (or it lags too far behind the log first). The session and its turn go on.
func TestHTTPStalledSSEReceiverBounded(t *testing.T) {
	e := newEnv(t, Options{QueueBytes: 1024, WriteTimeout: 200 * time.Millisecond})
	cl, conn, sid, sess := newHTTPSession(t, e, map[string]any{})
	sess.close() // the stalled receiver below takes its place
	stalled := &stalledWriter{header: http.Header{}, expired: make(chan struct{}), wrote: make(chan struct{})}
	req := httptest.NewRequest("GET", "/acp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Acp-Connection-Id", cl.conn)
	req.Header.Set("Acp-Session-Id", sid)
	served := make(chan struct{})
	waitFor(t, "the dropped receiver to let go", func() bool { return !e.acp.streamable.StreamHeld(cl.conn, sid) })
	go func() {
		defer close(served)
		e.acp.ServeAgent(stalled, req, "")
	}()
	waitFor(t, "the stalled receiver to hold the stream", func() bool { return e.acp.streamable.StreamHeld(cl.conn, sid) })
	cl.request("session/prompt", textPrompt(sid, "stall"), sid)
	// QueueBytes also bounds how far the writer may lag behind the log: when the agent writes the turn before
	// the writer reads it (a loaded machine), the connection is ended for lagging before anything is queued
	// for the receiver, which then ends unwritten. Either way the receiver must end.
	select {
	case <-stalled.wrote:
	case <-served:
	case <-time.After(stepTimeout):
		t.Fatal("the receiver was neither written to nor ended")
	}
	select {
	case <-served:
	case <-time.After(stepTimeout):
		t.Fatal("the stalled receiver was not dropped")
	}
	conn.ended()
	if r := cl.post(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/list"}, ""); r.status != 404 {
		t.Fatalf("POST after the connection ended: %d", r.status)
	}
	s, _ := e.reg.Get(sid)
	if s.Status() == "closed" {
		t.Fatal("the session was closed with its connection")
	}
}

// POST bodies are read under the inbound budget the WebSocket readers share: while a slow body holds it all,
// another POST is refused with 503 inbound_busy (Retry-After) once the budget's wait has passed; the budget
// is all released afterwards.
func TestHTTPBodyUnderInboundBudget(t *testing.T) {
	budget := inbound.New(4096, 100*time.Millisecond)
	e := newEnv(t, Options{Inbound: budget})
	pr, pw := io.Pipe()
	slow := make(chan int, 1)
	go func() {
		res, err := http.Post(e.srv.URL+"/acp", "application/json", pr)
		if err != nil {
			slow <- 0
			return
		}
		res.Body.Close()
		slow <- res.StatusCode
	}()
	if _, err := pw.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slow body to hold the budget", func() bool { return budget.InUse() == 4096 })
	r := doHTTP(t, "POST", e.srv.URL+"/acp", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
	if r.status != http.StatusServiceUnavailable || r.problemCode() != "inbound_busy" || r.header.Get("Retry-After") == "" {
		t.Fatalf("POST while the budget is held: %d %s", r.status, r.body)
	}
	_, _ = pw.Write([]byte(`}`))
	pw.Close()
	if st := <-slow; st != http.StatusOK {
		t.Fatalf("the slow initialize: %d", st)
	}
	waitFor(t, "the budget to be released", func() bool { return budget.InUse() == 0 })
}

package inbound

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// result is what the server side of a test socket read: one frame or the error that ended the socket.
type result struct {
	data     []byte
	err      error
	overheld bool // the frame's buffer was bigger than its reservation
}

// readServer is a real WebSocket server whose sockets read every message through b (read limit limit) and
// report each to results. Its handlers have ended when the test's cleanup returns.
func readServer(t *testing.T, b *Budget, limit int64, results chan<- result) string {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(limit)
		for {
			f, err := b.Read(r.Context(), c, limit)
			if err != nil {
				results <- result{err: err}
				switch {
				case errors.Is(err, ErrBusy):
					c.Close(websocket.StatusTryAgainLater, "busy")
				case errors.Is(err, ErrTooBig):
					c.Close(websocket.StatusMessageTooBig, "frame too big")
				}
				return
			}
			res := result{data: bytes.Clone(f.Data), overheld: int64(cap(f.Data)) > f.held}
			f.Release()
			results <- res
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func send(t *testing.T, c *websocket.Conn, typ websocket.MessageType, p []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, typ, p); err != nil {
		t.Fatal(err)
	}
}

// closeStatus reads from the client until the server's close arrives.
func closeStatus(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = 'a' + byte(i%26)
	}
	return p
}

// TestReadSizes: frames around every growth step and the read limit arrive intact, the budget is all
// released, and a frame over the limit still ends with 1009.
func TestReadSizes(t *testing.T) {
	const limit = 100_000
	b := New(1<<20, time.Minute)
	results := make(chan result, 16)
	c := dial(t, readServer(t, b, limit, results))
	for _, n := range []int{0, 1, firstChunk - 1, firstChunk, firstChunk + 1, 2*firstChunk + 1, limit - 1, limit} {
		send(t, c, websocket.MessageText, pattern(n))
		r := <-results
		if r.err != nil || !bytes.Equal(r.data, pattern(n)) || r.overheld {
			t.Fatalf("%d bytes: got %d bytes, err %v, overheld %v", n, len(r.data), r.err, r.overheld)
		}
	}
	// The server closes while the frame is still being written: the write itself may fail.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.Write(ctx, websocket.MessageText, pattern(limit+firstChunk))
	// Read refuses it itself, before the library would close the socket with its own text as the reason.
	if r := <-results; !errors.Is(r.err, ErrTooBig) {
		t.Fatalf("over the limit: %v", r.err)
	}
	if code := closeStatus(t, c); code != websocket.StatusMessageTooBig {
		t.Fatalf("over the limit closed with %v, want 1009", code)
	}
	if b.InUse() != 0 || b.Peak() > 1<<20 {
		t.Fatalf("in use %d, peak %d", b.InUse(), b.Peak())
	}
}

// TestReadRefusesInvalidUTF8: a text frame that is not UTF-8 is refused (the socket closes with 1007), also
// when the bad byte lies past a growth step; a binary frame is refused unread.
func TestReadRefusesInvalidUTF8(t *testing.T) {
	b := New(1<<20, time.Minute)
	results := make(chan result, 4)
	url := readServer(t, b, 1<<20, results)
	for _, p := range [][]byte{
		[]byte("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xff\xfe\"}"),
		append(pattern(firstChunk+10), 0xc3), // a truncated sequence at the very end
	} {
		c := dial(t, url)
		send(t, c, websocket.MessageText, p)
		if r := <-results; !errors.Is(r.err, ErrInvalidUTF8) {
			t.Fatalf("%d bytes: %v, want ErrInvalidUTF8", len(p), r.err)
		}
	}
	c := dial(t, url)
	send(t, c, websocket.MessageBinary, []byte("{}"))
	if r := <-results; !errors.Is(r.err, ErrBinary) {
		t.Fatalf("binary: %v", r.err)
	}
	if b.InUse() != 0 {
		t.Fatalf("%d bytes still held", b.InUse())
	}
}

// TestReadBusyWhenBudgetHeld: a frame that does not fit while the budget is held elsewhere is refused with
// ErrBusy (1013) after the bounded wait; once the budget is free, the same frame is read.
func TestReadBusyWhenBudgetHeld(t *testing.T) {
	const total = 256 << 10
	b := New(total, 20*time.Millisecond)
	results := make(chan result, 4)
	url := readServer(t, b, total, results)
	if !b.take(context.Background(), total-firstChunk) { // another socket holds all but one first chunk
		t.Fatal("could not hold the budget")
	}
	c := dial(t, url)
	send(t, c, websocket.MessageText, pattern(100_000))
	if r := <-results; !errors.Is(r.err, ErrBusy) {
		t.Fatalf("%v, want ErrBusy", r.err)
	}
	if code := closeStatus(t, c); code != websocket.StatusTryAgainLater {
		t.Fatalf("closed with %v, want 1013", code)
	}
	b.give(total - firstChunk)
	c = dial(t, url)
	send(t, c, websocket.MessageText, pattern(100_000))
	if r := <-results; r.err != nil || len(r.data) != 100_000 {
		t.Fatalf("after the release: %d bytes, %v", len(r.data), r.err)
	}
	if b.InUse() != 0 || b.Peak() > total {
		t.Fatalf("in use %d, peak %d", b.InUse(), b.Peak())
	}
}

// TestBudgetBoundsConcurrentFrames: many sockets sending large frames at once never hold more than the
// budget; each large frame is read whole or refused with ErrBusy, at least one gets through, and a client
// sending small frames meanwhile loses none.
func TestBudgetBoundsConcurrentFrames(t *testing.T) {
	const total, limit, big, sockets, small = 1 << 20, 1 << 20, 900 << 10, 8, 50
	b := New(total, time.Minute)
	bigResults := make(chan result, sockets)
	smallResults := make(chan result, small+1)
	bigURL := readServer(t, b, limit, bigResults)
	smallURL := readServer(t, b, limit, smallResults)

	conns := make([]*websocket.Conn, sockets)
	for i := range conns {
		conns[i] = dial(t, bigURL)
	}
	normal := dial(t, smallURL)
	var wg sync.WaitGroup
	errs := make(chan error, sockets+1)
	for _, c := range conns {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.Write(ctx, websocket.MessageText, pattern(big)); err != nil {
				errs <- err
			}
		})
	}
	wg.Go(func() {
		for i := range small {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := normal.Write(ctx, websocket.MessageText, []byte(`{"n":`+string(rune('0'+i%10))+`}`))
			cancel()
			if err != nil {
				errs <- err
				return
			}
		}
	})
	read, busy := 0, 0
	for range sockets {
		r := <-bigResults
		switch {
		case errors.Is(r.err, ErrBusy):
			busy++
		case r.err != nil:
			t.Fatalf("large frame: %v", r.err)
		case !bytes.Equal(r.data, pattern(big)) || r.overheld:
			t.Fatalf("large frame: %d bytes, overheld %v", len(r.data), r.overheld)
		default:
			read++
		}
	}
	for i := range small {
		if r := <-smallResults; r.err != nil || string(r.data) != `{"n":`+string(rune('0'+i%10))+`}` {
			t.Fatalf("small frame %d: %q, %v", i, r.data, r.err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		// A socket closed with 1013 may fail its write; that is the refusal, not a loss.
		if !errors.Is(err, context.DeadlineExceeded) && websocket.CloseStatus(err) == -1 && busy == 0 {
			t.Fatal(err)
		}
	}
	if read == 0 {
		t.Fatalf("no large frame got through (%d refused)", busy)
	}
	if peak := b.Peak(); peak > total || peak < big {
		t.Fatalf("peak %d bytes held, budget %d (a large frame alone needs %d)", peak, total, big)
	}
	t.Logf("%d large frames read, %d refused with 1013, peak %d of %d bytes", read, busy, b.Peak(), total)
}

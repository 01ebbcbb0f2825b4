package frameout

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// heldLimit bounds what a connection holds: past it, the held bytes go out with the write that would
// exceed it. 32 KiB is about fifty 600-byte frames per write(2); larger writes save little more.
const heldLimit = 32 << 10

// heldBufs lends the buffers held bytes wait in, so an idle connection holds none.
var heldBufs = sync.Pool{New: func() any { b := make([]byte, 0, heldLimit); return &b }}

// HeldConn is a connection whose writes can be held back and sent in one write(2) with the next. It sits
// under coder/websocket, which flushes its buffer after every message: while the face holds, those flushes
// land here and go out together on Flush. Each frame stays its own WebSocket message; only the syscalls
// are fewer.
//
// Writes come from coder/websocket under its write lock: the face's frames from its writer goroutine, and
// pongs, pings and close frames from others. Hold and Flush come from the face's writer goroutine. mu guards
// the flag and the buffer, never I/O: whoever writes takes what is held and sends it ahead of its own bytes.
// A write that takes it does so while the face still holds, so the face's next frame queues behind it on
// coder/websocket's lock; frames are never reordered, and a control frame only ever goes between messages.
// A write that carries a control frame is never held: a client's ping or close must not wait for the face.
type HeldConn struct {
	net.Conn // Static after construction.

	mu     sync.Mutex
	hold   bool      // Guarded by mu: writes are held until Flush.
	buf    *[]byte   // Guarded by mu: the held bytes, from heldBufs; nil when none.
	frames frameScan // Guarded by mu: where the written frames begin.
}

// Hold makes later writes wait for Flush (or for heldLimit).
func (c *HeldConn) Hold() {
	c.mu.Lock()
	c.hold = true
	c.mu.Unlock()
}

// Flush stops holding and sends what is held, in one write.
func (c *HeldConn) Flush() error {
	c.mu.Lock()
	c.hold = false
	b := c.buf
	c.buf = nil
	c.mu.Unlock()
	if b == nil {
		return nil
	}
	_, err := c.Conn.Write(*b)
	release(b)
	return err
}

// Write holds p while the face holds, it fits and it carries no control frame; otherwise it sends what is
// held and p.
func (c *HeldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	control := c.frames.scan(p)
	if c.hold && !control && len(p) <= heldLimit && (c.buf == nil || len(*c.buf)+len(p) <= heldLimit) {
		if c.buf == nil {
			c.buf = heldBufs.Get().(*[]byte)
		}
		*c.buf = append(*c.buf, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	b := c.buf
	c.buf = nil
	c.mu.Unlock()
	if b == nil {
		return c.Conn.Write(p)
	}
	defer release(b)
	if len(*b)+len(p) <= cap(*b) {
		*b = append(*b, p...)
		if _, err := c.Conn.Write(*b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	bufs := net.Buffers{*b, p} // writev on TCP
	if _, err := bufs.WriteTo(c.Conn); err != nil {
		return 0, err
	}
	return len(p), nil
}

func release(b *[]byte) {
	*b = (*b)[:0]
	heldBufs.Put(b)
}

// Accept is websocket.Accept on a HeldConn, returned beside the socket for the face's Writer (Batch).
func Accept(w http.ResponseWriter, r *http.Request, opts *websocket.AcceptOptions) (*websocket.Conn, *HeldConn, error) {
	hw := &holdingHijacker{ResponseWriter: w}
	c, err := websocket.Accept(hw, r, opts)
	return c, hw.held, err
}

// holdingHijacker hands coder/websocket the hijacked connection wrapped in a HeldConn, with the server's
// buffered writer pointed at it.
type holdingHijacker struct {
	http.ResponseWriter
	held *HeldConn // set by Hijack
}

func (h *holdingHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Flush(); err != nil { // empty after a hijack; flushed so that Reset loses nothing
		conn.Close()
		return nil, nil, err
	}
	h.held = &HeldConn{Conn: conn}
	brw.Writer.Reset(h.held)
	return h.held, brw, nil
}

// HeldWriter holds what a face writes to a writer it cannot wrap (an HTTP response, whose own buffers send
// 2–4 KiB at a time) and writes it there in one Write on Flush, or when the held bytes would pass heldLimit,
// then calls flush. Only the face's writer goroutine uses it.
type HeldWriter struct {
	w     io.Writer    // Static after construction.
	flush func() error // Static after construction.
	buf   *[]byte      // The held bytes, from heldBufs; nil when none.
}

// NewHeldWriter holds writes for w; flush pushes w's own buffers out (http.ResponseController.Flush).
func NewHeldWriter(w io.Writer, flush func() error) *HeldWriter {
	return &HeldWriter{w: w, flush: flush}
}

// Write holds p; what is held goes out first when p would not fit, and p itself when it is over the limit.
func (h *HeldWriter) Write(p []byte) (int, error) {
	if h.buf != nil && len(*h.buf)+len(p) > heldLimit {
		if err := h.send(); err != nil {
			return 0, err
		}
	}
	if len(p) > heldLimit {
		return h.w.Write(p)
	}
	if h.buf == nil {
		h.buf = heldBufs.Get().(*[]byte)
	}
	*h.buf = append(*h.buf, p...)
	return len(p), nil
}

// WriteString is Write for a string, without converting it.
func (h *HeldWriter) WriteString(s string) (int, error) {
	if h.buf != nil && len(*h.buf)+len(s) <= heldLimit {
		*h.buf = append(*h.buf, s...)
		return len(s), nil
	}
	return h.Write([]byte(s))
}

// Hold implements Batcher: a HeldWriter always holds.
func (h *HeldWriter) Hold() {}

// Flush implements Batcher: what is held goes out in one Write, then w's buffers.
func (h *HeldWriter) Flush() error {
	if err := h.send(); err != nil {
		return err
	}
	return h.flush()
}

func (h *HeldWriter) send() error {
	b := h.buf
	if b == nil {
		return nil
	}
	h.buf = nil
	_, err := h.w.Write(*b)
	release(b)
	return err
}

// Batcher holds a face's frames until Flush: a HeldConn or a HeldWriter.
type Batcher interface {
	Hold()
	Flush() error
}

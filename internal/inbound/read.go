package inbound

import (
	"context"
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// Why Read refused a frame. The socket is closed with the code in parentheses.
var (
	ErrBusy        = errors.New("inbound budget exhausted")         // 1013 try again later
	ErrInvalidUTF8 = errors.New("text frame is not valid UTF-8")    // 1007 invalid frame payload data
	ErrBinary      = errors.New("binary frame")                     // 1003 unsupported data
	ErrTooBig      = errors.New("frame larger than the read limit") // 1009 message too big
)

// firstChunk is what a reader reserves (and allocates) for a frame before reading any of it: a typical
// JSON-RPC message fits, and a client that sends a frame's first bytes and stalls holds no more than this.
const firstChunk = 4 << 10

// Frame is one text frame read under the budget. Call Release once the frame has been handled.
type Frame struct {
	Data []byte // Owned by the caller until Release.

	b    *Budget // Static after construction.
	held int64   // bytes reserved for Data (at least its capacity)
}

// Release returns the frame's bytes to the budget. Data must not be used afterwards.
func (f *Frame) Release() {
	f.b.give(f.held)
	f.Data, f.held = nil, 0
}

// Read reads the next message of c, which must be a text frame of valid UTF-8 (RFC 6455 §8.1), holding its
// bytes against the budget; limit is the socket's read limit (c's own limit must not be lower): a larger
// message is ErrTooBig. A binary frame is refused unread. Once a message has begun, it must arrive whole
// within the budget's frame timeout, or the connection is closed: a client that sends part of a large frame
// and stalls cannot keep its reservation from every other socket. Errors from the connection are returned as
// they are.
func (b *Budget) Read(ctx context.Context, c *websocket.Conn, limit int64) (Frame, error) {
	// The library reads a message with the context its header was read with: one that ends when the frame
	// timeout passes, counted from the header, not from the wait for it.
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	typ, r, err := c.Reader(mctx)
	if err != nil {
		return Frame{}, err
	}
	if b != nil && b.frameTimeout > 0 {
		t := time.AfterFunc(b.frameTimeout, cancel)
		defer t.Stop()
	}
	if typ != websocket.MessageText {
		return Frame{}, ErrBinary
	}
	return b.readAll(ctx, r, limit)
}

// ReadBody reads an HTTP request body (one Streamable HTTP message of `/acp`) under the budget, as Read reads
// a frame: at most limit bytes (ErrTooBig past it), valid UTF-8 (ErrInvalidUTF8), ErrBusy when the budget has
// no room in time. The body's arrival is bounded by the server's body deadline, not the frame timeout.
func (b *Budget) ReadBody(ctx context.Context, r io.Reader, limit int64) (Frame, error) {
	return b.readAll(ctx, r, limit)
}

// readAll reads r to its end into a buffer grown under the budget.
func (b *Budget) readAll(ctx context.Context, r io.Reader, limit int64) (Frame, error) {
	f := Frame{b: b}
	first := min(firstChunk, limit)
	if b != nil {
		first = min(first, b.total)
	}
	if !b.take(ctx, first) {
		return Frame{}, ErrBusy
	}
	f.held = first
	buf := make([]byte, 0, first)
	for {
		if len(buf) == cap(buf) {
			// Full: look for the end of the message before reserving more.
			var one [1]byte
			n, err := r.Read(one[:])
			if n > 0 {
				var gerr error
				if buf, gerr = f.grow(ctx, buf, limit); gerr != nil {
					return Frame{}, gerr
				}
				buf = append(buf, one[0])
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Release()
				return Frame{}, err
			}
			continue
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Release()
			return Frame{}, err
		}
	}
	if !utf8.Valid(buf) {
		f.Release()
		return Frame{}, ErrInvalidUTF8
	}
	f.Data = buf
	return f, nil
}

// grow doubles buf's capacity, up to limit bytes, reserving the growth (Budget.takeMore): a frame of the
// largest size fits a budget of that size. A byte past the limit is ErrTooBig (coder/websocket lets one byte
// past its own limit through, so the gateway, not the library, closes the socket with a short reason). On
// failure the frame's budget is released.
func (f *Frame) grow(ctx context.Context, buf []byte, limit int64) ([]byte, error) {
	more := min(int64(2*cap(buf)), limit) - int64(cap(buf))
	if more <= 0 {
		f.Release()
		return nil, ErrTooBig
	}
	if !f.b.takeMore(ctx, more) {
		f.Release()
		return nil, ErrBusy
	}
	f.held += more
	return append(make([]byte, 0, int64(cap(buf))+more), buf...), nil
}

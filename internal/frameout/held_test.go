package frameout

import (
	"bytes"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"
)

// recordingConn records each write(2) a HeldConn makes.
type recordingConn struct {
	net.Conn // nil: only Write is used
	mu       sync.Mutex
	writes   []string
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *recordingConn) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// wsFrame is a frame as a server sends it (final, unmasked) of opcode with payload.
func wsFrame(opcode byte, payload string) string {
	h := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		h = append(h, byte(n))
	case n < 1<<16:
		h = binary.BigEndian.AppendUint16(append(h, 126), uint16(n))
	default:
		h = binary.BigEndian.AppendUint64(append(h, 127), uint64(n))
	}
	return string(h) + payload
}

// WebSocket opcodes the tests write.
const (
	opText  = 0x1
	opClose = 0x8
	opPong  = 0xA
)

func TestHeldConnSendsHeldWritesInOne(t *testing.T) {
	rc := &recordingConn{}
	c := &HeldConn{Conn: rc}
	c.Hold()
	var want strings.Builder
	for _, s := range []string{"a", "bb", "ccc"} {
		f := wsFrame(opText, s)
		if n, err := c.Write([]byte(f)); n != len(f) || err != nil {
			t.Fatal(n, err)
		}
		want.WriteString(f)
	}
	if w := rc.got(); len(w) != 0 {
		t.Fatalf("held writes went out: %q", w)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if w := rc.got(); len(w) != 1 || w[0] != want.String() {
		t.Fatalf("writes %q, want one %q", w, want.String())
	}
	// Not holding: each write goes out at once; an empty flush writes nothing.
	c.Write([]byte(wsFrame(opText, "d")))
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if w := rc.got(); len(w) != 2 || w[1] != wsFrame(opText, "d") {
		t.Fatalf("writes %q, want \"d\" at once", w)
	}
}

// A write that would pass heldLimit takes everything held with it, in order.
func TestHeldConnLimitAndOrder(t *testing.T) {
	rc := &recordingConn{}
	c := &HeldConn{Conn: rc}
	c.Hold()
	frame := wsFrame(opText, strings.Repeat("f", 996)) // 1000 bytes with its header
	var want bytes.Buffer
	for range heldLimit / 1000 {
		c.Write([]byte(frame))
		want.WriteString(frame)
	}
	if w := rc.got(); len(w) != 0 {
		t.Fatalf("%d writes before the limit", len(w))
	}
	c.Write([]byte(frame)) // past the limit
	want.WriteString(frame)
	big := wsFrame(opText, strings.Repeat("B", heldLimit+1)) // larger than the limit on its own
	c.Write([]byte(big))
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	// On TCP the held bytes and the frame past the limit are one writev; this conn sees its two parts.
	w := rc.got()
	if len(w) != 3 || w[0]+w[1] != want.String() || w[2] != big {
		t.Fatalf("%d writes of %v bytes; want the held frames with the one past the limit, then the big one", len(w), lens(w))
	}
}

// TestHeldConnSendsControlFramesAtOnce: a pong or a close frame (written by coder/websocket's reader while
// the face holds its frames) goes out at once, with the held frames ahead of it; it was held until the face
// flushed, so a client's ping or close handshake waited on a busy face. Bytes of a data frame that merely
// look like a control frame's header (a payload split across writes) are held as before.
func TestHeldConnSendsControlFramesAtOnce(t *testing.T) {
	rc := &recordingConn{}
	c := &HeldConn{Conn: rc}
	c.Hold()
	data := wsFrame(opText, "held")
	c.Write([]byte(data))
	pong := wsFrame(opPong, "")
	c.Write([]byte(pong))
	if w := rc.got(); len(w) != 1 || w[0] != data+pong {
		t.Fatalf("writes %q after a pong while holding, want the held frame and the pong at once", w)
	}

	// A data frame whose payload arrives in parts, the second starting with the bytes of a close header.
	long := wsFrame(opText, "\x88\x02"+strings.Repeat("x", 200))
	c.Write([]byte(long[:4]))
	c.Write([]byte(long[4:]))
	if w := rc.got(); len(w) != 1 {
		t.Fatalf("a data frame's payload went out while holding: %q", w[1:])
	}
	closing := wsFrame(opClose, "\x03\xe8")
	c.Write([]byte(closing[:1])) // a header split across writes (a full bufio buffer) still counts
	c.Write([]byte(closing[1:]))
	if w := rc.got(); len(w) != 3 || w[1] != long+closing[:1] || w[2] != closing[1:] {
		t.Fatalf("writes %q after a close frame while holding, want the held frame and the close at once", w[1:])
	}
	if err := c.Flush(); err != nil || len(rc.got()) != 3 {
		t.Fatalf("a flush after the control frames wrote %q (err %v)", rc.got()[3:], err)
	}
}

func lens(w []string) []int {
	n := make([]int, len(w))
	for i, s := range w {
		n[i] = len(s)
	}
	return n
}

// A HeldWriter sends what it holds in one Write on Flush (then the writer's own flush), sends early only
// what would pass heldLimit, passes an over-limit write through, and never reorders.
func TestHeldWriterSendsHeldWritesInOne(t *testing.T) {
	rec := &recordingConn{}
	flushes := 0
	h := NewHeldWriter(rec, func() error { flushes++; return nil })
	for _, s := range []string{"id: 1\n", "data: {}", "\n\n", "id: 2\n"} {
		h.Write([]byte(s))
	}
	h.WriteString("data: []\n\n")
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("writes before Flush: %q", got)
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 1 || got[0] != "id: 1\ndata: {}\n\nid: 2\ndata: []\n\n" || flushes != 1 {
		t.Fatalf("after Flush: writes %q, flushes %d", got, flushes)
	}
	if err := h.Flush(); err != nil || len(rec.got()) != 1 || flushes != 2 {
		t.Fatalf("an empty Flush wrote %q (err %v), flushes %d", rec.got()[1:], err, flushes)
	}

	rec.writes = nil
	a := strings.Repeat("a", heldLimit-10)
	h.WriteString(a)
	h.WriteString("bbbbbbbbbbbb") // would pass the limit: a goes first
	big := strings.Repeat("c", heldLimit+1)
	h.Write([]byte(big)) // over the limit by itself: what is held, then it, in order
	h.WriteString("d")
	h.Flush()
	if got := rec.got(); len(got) != 4 || got[0] != a || got[1] != "bbbbbbbbbbbb" || got[2] != big || got[3] != "d" {
		lens := []int{}
		for _, w := range got {
			lens = append(lens, len(w))
		}
		t.Fatalf("writes of %v bytes, want %d, 12, %d, 1", lens, len(a), len(big))
	}
}

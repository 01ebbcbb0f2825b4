package agents

import "sync"

// TailBuffer keeps the last max bytes written to it: an agent's stderr, bounded so a chatty agent cannot grow
// the gateway's memory. Safe for concurrent use. It is shared with internal/agents/events, whose per-session
// processes keep their stderr the same way.
type TailBuffer struct {
	max int // Static after construction.

	mu      sync.Mutex
	buf     []byte // Guarded by mu.
	dropped int64  // Guarded by mu; bytes discarded from the front.
}

// NewTailBuffer returns a TailBuffer that keeps the last max bytes.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{max: max} }

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.max {
		t.dropped += int64(len(p) - t.max)
		p = p[len(p)-t.max:]
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept tail.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Tail returns at most the last n bytes kept.
func (t *TailBuffer) Tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

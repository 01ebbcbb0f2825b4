package agents

import (
	"strings"
	"sync"
	"unicode/utf8"
)

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

// String returns the kept tail, as valid UTF-8.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return validTail(t.buf, t.dropped > 0)
}

// Tail returns at most the last n bytes kept, as valid UTF-8.
func (t *TailBuffer) Tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	cut := t.dropped > 0
	if len(b) > n {
		b, cut = b[len(b)-n:], true
	}
	return validTail(b, cut)
}

// validTail returns b as a string of valid UTF-8: a character the cut at its front split is dropped (it is
// not the agent's fault), and invalid sequences the agent wrote become U+FFFD.
func validTail(b []byte, cut bool) string {
	if cut {
		for k := 0; k < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); k++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

package agents

import "sync"

// tailBuffer keeps the last max bytes written to it: an agent's stderr, bounded so a chatty agent cannot grow
// the gateway's memory. Safe for concurrent use.
type tailBuffer struct {
	max int // Static after construction.

	mu      sync.Mutex
	buf     []byte // Guarded by mu.
	dropped int64  // Guarded by mu; bytes discarded from the front.
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
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
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

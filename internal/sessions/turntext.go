package sessions

import (
	"strings"
	"sync"
)

// turnTextChunk is the size of the pieces a turn's agent text is kept in past its first turnTextChunk bytes.
const turnTextChunk = 16 << 10

// turnTextChunks recycles the pieces across turns and sessions: a flood's text then costs no allocation
// until the turn ends, and an idle session holds none.
var turnTextChunks = sync.Pool{New: func() any { return new([turnTextChunk]byte) }}

// turnText collects a turn's agent text (translate.TextSink). Its first turnTextChunk bytes grow as a slice
// does, so a short answer costs what it did; the rest is kept in fixed pieces from a pool instead of one
// buffer that keeps growing: a growing buffer allocates about five times the text it ends with (append grows
// large slices by a quarter) and copies it as often. The text is joined once, when asked for; release drops
// the first bytes and returns the pieces. Not safe for concurrent use; a turn's text is guarded by its
// session's mu.
type turnText struct {
	head   []byte                 // the first turnTextChunk bytes at most
	chunks []*[turnTextChunk]byte // the rest: full except the last
	n      int                    // bytes written
}

// Len is the number of bytes written.
func (t *turnText) Len() int { return t.n }

// Cap is how many bytes the buffers held take.
func (t *turnText) Cap() int { return cap(t.head) + len(t.chunks)*turnTextChunk }

// Write appends p; it never fails.
func (t *turnText) Write(p []byte) (int, error) {
	appendText(t, p)
	return len(p), nil
}

// WriteString appends s; it never fails.
func (t *turnText) WriteString(s string) (int, error) {
	appendText(t, s)
	return len(s), nil
}

// appendText copies p into the first bytes while they have room, then into the last piece, taking a new one
// whenever it is full.
func appendText[T string | []byte](t *turnText, p T) {
	if k := min(len(p), turnTextChunk-len(t.head)); k > 0 {
		t.head = append(t.head, p[:k]...)
		t.n += k
		p = p[k:]
	}
	for len(p) > 0 {
		at := (t.n - turnTextChunk) % turnTextChunk
		if at == 0 && t.n-turnTextChunk == len(t.chunks)*turnTextChunk {
			t.chunks = append(t.chunks, turnTextChunks.Get().(*[turnTextChunk]byte))
		}
		k := copy(t.chunks[len(t.chunks)-1][at:], p)
		t.n += k
		p = p[k:]
	}
}

// String joins the text written so far (one allocation of its length).
func (t *turnText) String() string {
	if t.n == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(t.n)
	b.Write(t.head)
	for i, c := range t.chunks {
		b.Write(c[:min(turnTextChunk, t.n-turnTextChunk-i*turnTextChunk)])
	}
	return b.String()
}

// release drops the text: its first bytes go to the collector, its pieces back to the pool for other turns.
func (t *turnText) release() {
	for i, c := range t.chunks {
		turnTextChunks.Put(c)
		t.chunks[i] = nil
	}
	*t = turnText{}
}

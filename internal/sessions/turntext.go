package sessions

import (
	"strings"
	"sync"
)

// turnTextChunk is the size of the pieces a turn's agent text is kept in while the turn runs.
const turnTextChunk = 16 << 10

// turnTextChunks recycles the pieces across turns and sessions: a flood's text then costs no allocation
// until the turn ends, and an idle session holds none.
var turnTextChunks = sync.Pool{New: func() any { return new([turnTextChunk]byte) }}

// turnText collects a turn's agent text (translate.TextSink) in fixed pieces instead of one buffer that
// grows: a growing buffer allocates about five times the text it ends with (append grows large slices by a
// quarter) and copies it as often. The text is joined once, when asked for; release returns the pieces.
// Not safe for concurrent use; a turn's text is guarded by its session's mu.
type turnText struct {
	chunks []*[turnTextChunk]byte // full except the last, which holds n - (len(chunks)-1)*turnTextChunk bytes
	n      int
}

// Len is the number of bytes written.
func (t *turnText) Len() int { return t.n }

// Cap is how many bytes the pieces held take.
func (t *turnText) Cap() int { return len(t.chunks) * turnTextChunk }

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

// appendText copies p into the last piece, taking a new one whenever it is full.
func appendText[T string | []byte](t *turnText, p T) {
	for len(p) > 0 {
		at := t.n % turnTextChunk
		if t.n == len(t.chunks)*turnTextChunk {
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
	for i, c := range t.chunks {
		b.Write(c[:min(turnTextChunk, t.n-i*turnTextChunk)])
	}
	return b.String()
}

// release gives the pieces back for other turns and empties the text.
func (t *turnText) release() {
	for i, c := range t.chunks {
		turnTextChunks.Put(c)
		t.chunks[i] = nil
	}
	t.chunks, t.n = t.chunks[:0], 0
}

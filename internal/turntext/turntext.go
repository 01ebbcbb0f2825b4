// Package turntext holds a turn's agent text in pooled pieces, so a long answer neither reallocates nor
// copies as it grows. It holds no session state; a session guards a turn's Buffer with its own lock.
package turntext

import (
	"strings"
	"sync"
)

// ChunkSize is the size of the pieces a turn's agent text is kept in past its first ChunkSize bytes.
const ChunkSize = 16 << 10

// chunkPool recycles the pieces across turns and sessions: a flood's text then costs no allocation
// until the turn ends, and an idle session holds none.
var chunkPool = sync.Pool{New: func() any { return new([ChunkSize]byte) }}

// Buffer collects a turn's agent text (translate.TextSink). Its first ChunkSize bytes grow as a slice
// does, so a short answer costs what it did; the rest is kept in fixed pieces from a pool instead of one
// buffer that keeps growing: a growing buffer allocates about five times the text it ends with (append grows
// large slices by a quarter) and copies it as often. The text is joined once, when asked for; Release drops
// the first bytes and returns the pieces. Not safe for concurrent use; a turn's text is guarded by its
// session's mu.
type Buffer struct {
	head   []byte             // the first ChunkSize bytes at most
	chunks []*[ChunkSize]byte // the rest: full except the last
	n      int                // bytes written
}

// Len is the number of bytes written.
func (t *Buffer) Len() int { return t.n }

// Cap is how many bytes the buffers held take.
func (t *Buffer) Cap() int { return cap(t.head) + len(t.chunks)*ChunkSize }

// Write appends p; it never fails.
func (t *Buffer) Write(p []byte) (int, error) {
	appendTo(t, p)
	return len(p), nil
}

// WriteString appends s; it never fails.
func (t *Buffer) WriteString(s string) (int, error) {
	appendTo(t, s)
	return len(s), nil
}

// appendTo copies p into the first bytes while they have room, then into the last piece, taking a new one
// whenever it is full.
func appendTo[T string | []byte](t *Buffer, p T) {
	if k := min(len(p), ChunkSize-len(t.head)); k > 0 {
		t.head = append(t.head, p[:k]...)
		t.n += k
		p = p[k:]
	}
	for len(p) > 0 {
		at := (t.n - ChunkSize) % ChunkSize
		if at == 0 && t.n-ChunkSize == len(t.chunks)*ChunkSize {
			t.chunks = append(t.chunks, chunkPool.Get().(*[ChunkSize]byte))
		}
		k := copy(t.chunks[len(t.chunks)-1][at:], p)
		t.n += k
		p = p[k:]
	}
}

// String joins the text written so far (one allocation of its length).
func (t *Buffer) String() string {
	if t.n == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(t.n)
	b.Write(t.head)
	for i, c := range t.chunks {
		b.Write(c[:min(ChunkSize, t.n-ChunkSize-i*ChunkSize)])
	}
	return b.String()
}

// Release drops the text: its first bytes go to the collector, its pieces back to the pool for other turns.
func (t *Buffer) Release() {
	for i, c := range t.chunks {
		chunkPool.Put(c)
		t.chunks[i] = nil
	}
	*t = Buffer{}
}

package agents

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Limits of what the gateway reports about an agent's stdout lines that are not JSON-RPC.
const (
	noiseKeep    = 512      // bytes of a non-JSON line kept for the diagnostic
	maxLineBytes = 10 << 20 // acp-go-sdk's line limit: a longer line ends the connection
)

// lineWatch looks at the agent's stdout as the SDK reads it: lines that cannot be JSON-RPC (they do not start
// with '{') are reported to onNoise, and a line past the SDK's limit is remembered so the session can say why
// the connection ended. It never buffers more than noiseKeep bytes.
type lineWatch struct {
	onNoise func(prefix []byte, total int) // Static after construction; nil = ignore.

	started bool   // the current line has a non-space byte
	json    bool   // its first non-space byte is '{'
	keep    []byte // prefix of a non-JSON line
	length  int    // bytes of the current line so far

	mu      sync.Mutex
	tooLong bool // Guarded by mu.
}

// scan watches a chunk of stdout. Inside a JSON line only its end and its length matter, so it skips to the
// next newline (bytes.IndexByte); the bytes before a line's first non-space one are looked at one by one.
func (w *lineWatch) scan(p []byte) {
	for len(p) > 0 {
		if w.started && w.json {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				w.grow(len(p))
				return
			}
			w.grow(i)
			w.endLine()
			p = p[i+1:]
			continue
		}
		c := p[0]
		p = p[1:]
		if c == '\n' {
			w.endLine()
			continue
		}
		w.grow(1)
		if !w.started {
			if c == ' ' || c == '\t' || c == '\r' {
				continue
			}
			w.started, w.json = true, c == '{'
		}
		if !w.json && len(w.keep) < noiseKeep {
			w.keep = append(w.keep, c)
		}
	}
}

// grow counts n more bytes of the current line and remembers when it reaches the SDK's limit (its scanner
// gives up once its 10 MiB buffer is full).
func (w *lineWatch) grow(n int) {
	before := w.length
	w.length += n
	if before < maxLineBytes && w.length >= maxLineBytes {
		w.mu.Lock()
		w.tooLong = true
		w.mu.Unlock()
	}
}

func (w *lineWatch) endLine() {
	if w.started && !w.json && w.onNoise != nil {
		keep := w.keep
		if w.length > len(keep) {
			keep = cutIncompleteRune(keep)
		}
		w.onNoise(keep, w.length)
	}
	w.started, w.json, w.keep, w.length = false, false, w.keep[:0], 0
}

// sawTooLong reports whether the agent wrote a line longer than the SDK accepts.
func (w *lineWatch) sawTooLong() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tooLong
}

// stdoutWatch wraps the agent's stdout as the SDK reads it, feeding a lineWatch. Reads block until ready is
// closed: the SDK starts its reader goroutine in NewConnection, before SetLogger can be called without a data
// race.
type stdoutWatch struct {
	r     io.Reader
	ready <-chan struct{}
	lines lineWatch     // Owned by the SDK's reader goroutine (the only caller of Read).
	read  atomic.Uint64 // bytes read so far: a turn that sees it stand still hears nothing from the agent
}

func (s *stdoutWatch) Read(p []byte) (int, error) {
	<-s.ready
	n, err := s.r.Read(p)
	if n > 0 {
		s.read.Add(uint64(n))
		s.lines.scan(p[:n])
	}
	return n, err
}

// cutIncompleteRune drops a UTF-8 sequence the noiseKeep cut split, which would otherwise show as a spurious
// U+FFFD after a valid line's prefix. Bytes that are invalid in themselves are left for the log's encoder to
// replace.
func cutIncompleteRune(p []byte) []byte {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return p[:i]
			}
			break
		}
	}
	return p
}

package agents

import (
	"sync"
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
	match   int    // progress through `"method"` ws* ':' ws* `"session/update"` (see step)
	counted bool   // the current line was counted as a session/update notification

	mu      sync.Mutex
	tooLong bool // Guarded by mu.
}

// scan watches a chunk of stdout and returns how many `session/update` notification lines it completed the
// method member of (at most one per line).
func (w *lineWatch) scan(p []byte) (updates int) {
	for _, c := range p {
		if c == '\n' {
			w.endLine()
			continue
		}
		if !w.counted && w.step(c) {
			w.counted = true
			updates++
		}
		w.length++
		if w.length == maxLineBytes { // the SDK's scanner gives up once its 10 MiB buffer is full
			w.mu.Lock()
			w.tooLong = true
			w.mu.Unlock()
		}
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
	return updates
}

const (
	methodKey   = `"method"`
	updateValue = `"session/update"`
)

// step advances the matcher for `"method"\s*:\s*"session/update"` by one byte, streaming (tokens may span
// reads) and without buffering. It reports a complete match.
func (w *lineWatch) step(c byte) bool {
	const keyEnd = len(methodKey)           // matched the key
	const colon = keyEnd + 1                // matched the colon
	const valEnd = colon + len(updateValue) // matched the value
	m := w.match
	switch {
	case m < keyEnd:
		if c == methodKey[m] {
			w.match++
			return false
		}
	case m == keyEnd:
		if c == ' ' || c == '\t' || c == '\r' {
			return false
		}
		if c == ':' {
			w.match = colon
			return false
		}
	case m == colon && (c == ' ' || c == '\t' || c == '\r'):
		return false
	case m < valEnd:
		if c == updateValue[m-colon] {
			w.match++
			if w.match == valEnd {
				w.match = 0
				return true
			}
			return false
		}
	}
	// Mismatch: this byte may start the key again.
	w.match = 0
	if c == methodKey[0] {
		w.match = 1
	}
	return false
}

func (w *lineWatch) endLine() {
	if w.started && !w.json && w.onNoise != nil {
		keep := w.keep
		if w.length > len(keep) {
			keep = cutIncompleteRune(keep)
		}
		w.onNoise(keep, w.length)
	}
	w.started, w.json, w.keep, w.length, w.match, w.counted = false, false, w.keep[:0], 0, 0, false
}

// sawTooLong reports whether the agent wrote a line longer than the SDK accepts.
func (w *lineWatch) sawTooLong() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tooLong
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

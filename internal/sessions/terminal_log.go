package sessions

import (
	"sync"
	"time"
)

// A command's output reaches clients through the session's event log, which is bounded and which every client
// reads: a command with endless output (`yes`) would fill it as fast as the pipe is read, evict slow clients
// and spend the log's whole memory bound on one terminal. So output is coalesced into frames (one per
// terminalFrameInterval or terminalReadBytes, whichever comes first) and a terminal logs at most
// terminalLogBudget bytes; past it one `{terminalId, data: "", truncated: true}` note is logged and the rest
// is kept only in the terminal's own buffer, which terminal/output still returns. The command is never
// blocked: logging only appends to memory.

const (
	// terminalFrameInterval is how long output may wait to be coalesced into one frame.
	terminalFrameInterval = 50 * time.Millisecond
	// terminalLogBudget bounds the output bytes one terminal logs as frames.
	terminalLogBudget = 1 << 20
)

// terminalLog coalesces a terminal's output into frames within the budget. The reader adds and closes it; a
// timer flushes what waited terminalFrameInterval.
type terminalLog struct {
	// Static after construction.
	emit     func(data string, truncated bool) // logs one frame; called with flushMu held, so frames stay in order
	budget   int
	maxFrame int // >= utf8.UTFMax
	interval time.Duration

	flushMu sync.Mutex // held while a frame is taken and emitted, so frames and close keep their order

	mu      sync.Mutex
	pending []byte      // Guarded by mu; valid UTF-8 not logged yet.
	timer   *time.Timer // Guarded by mu; armed while pending is not empty.
	logged  int         // Guarded by mu; bytes logged so far.
	over    bool        // Guarded by mu; the budget is spent and the note logged.
	closed  bool        // Guarded by mu; close has run: the timer does nothing.
}

func newTerminalLog(emit func(string, bool), budget, maxFrame int, interval time.Duration) *terminalLog {
	return &terminalLog{emit: emit, budget: budget, maxFrame: maxFrame, interval: interval}
}

// add takes new output text: full frames go out now, the rest waits for the timer or more output.
func (l *terminalLog) add(text string) {
	if text == "" {
		return
	}
	l.mu.Lock()
	if l.over || l.closed {
		l.mu.Unlock()
		return
	}
	l.pending = append(l.pending, text...)
	full := len(l.pending) >= l.maxFrame
	if !full && l.timer == nil {
		l.timer = time.AfterFunc(l.interval, l.onTimer)
	}
	l.mu.Unlock()
	if full {
		l.flush(false)
	}
}

func (l *terminalLog) onTimer() { l.flush(false) }

// close logs what is pending; nothing is logged after it returns.
func (l *terminalLog) close() { l.flush(true) }

// flush emits the pending output as frames of at most maxFrame bytes (all of it when final or timed out,
// else only full frames), within the budget.
func (l *terminalLog) flush(final bool) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.closed = final
	text := string(l.pending)
	l.pending = l.pending[:0]
	var frames []string
	note := false
	for _, chunk := range textChunks(text, l.maxFrame) {
		if l.over {
			break
		}
		if l.logged+len(chunk) > l.budget {
			l.over, note = true, true
			break
		}
		l.logged += len(chunk)
		frames = append(frames, chunk)
	}
	if l.over {
		l.pending = nil
	}
	l.mu.Unlock()
	for _, f := range frames {
		l.emit(f, false)
	}
	if note {
		l.emit("", true)
	}
}

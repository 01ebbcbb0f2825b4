package agentsvc

import (
	"sync"
	"time"
)

// A command's output reaches clients through the session's event log, which is bounded and which every client
// reads: a command with endless output (`yes`) would fill it as fast as the pipe is read, evict slow clients
// and spend the log's whole memory bound on one terminal. So output is coalesced into frames (one per
// terminalFrameInterval or terminalReadBytes, whichever comes first) and a terminal logs at most
// terminalLogBudget bytes; past it one `{terminalId, data: "", truncated: true}` note is logged and the rest
// is kept only in the terminal's own buffer, which terminal/output still returns — and, for clients, in a tail
// of terminalTailBytes that is logged when the output ends (its first frame `truncated: true` when output
// before it was left out), so the pane and the snapshot end with the command's latest output, not with the
// end of its first MiB. The command is never blocked: logging only appends to memory.

const (
	// terminalFrameInterval is how long output may wait to be coalesced into one frame.
	terminalFrameInterval = 50 * time.Millisecond
	// terminalLogBudget bounds the output bytes one terminal logs as frames, but for the tail.
	terminalLogBudget = 1 << 20
	// terminalTailBytes is the end of the output past the budget logged when the output ends: as much as a
	// snapshot shows of a terminal.
	terminalTailBytes = 64 << 10
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
	pending []byte         // Guarded by mu; valid UTF-8 not logged yet.
	timer   *time.Timer    // Guarded by mu; armed while pending is not empty.
	logged  int            // Guarded by mu; bytes logged so far.
	over    bool           // Guarded by mu; the budget is spent and the note logged.
	tail    terminalOutput // Guarded by mu; once over, the latest output (tailMax bytes), logged by close.
	closed  bool           // Guarded by mu; close has run: the timer does nothing.
}

func newTerminalLog(emit func(string, bool), budget, tailMax, maxFrame int, interval time.Duration) *terminalLog {
	return &terminalLog{emit: emit, budget: budget, maxFrame: maxFrame, interval: interval, tail: terminalOutput{limit: tailMax}}
}

// add takes new output text: full frames go out now, the rest waits for the timer or more output.
func (l *terminalLog) add(text string) {
	if text == "" {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	if l.over {
		l.tail.keep(text)
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
		if !l.over && l.logged+len(chunk) > l.budget {
			l.over, note = true, true
		}
		if l.over {
			l.tail.keep(chunk)
			continue
		}
		l.logged += len(chunk)
		frames = append(frames, chunk)
	}
	if l.over {
		l.pending = nil
	}
	var tail []string
	cut := false
	if final && l.over {
		tail, cut = textChunks(string(l.tail.text()), l.maxFrame), l.tail.truncated
		l.tail = terminalOutput{}
	}
	l.mu.Unlock()
	for _, f := range frames {
		l.emit(f, false)
	}
	if note {
		l.emit("", true)
	}
	for i, f := range tail {
		l.emit(f, i == 0 && cut)
	}
}

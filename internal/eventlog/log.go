package eventlog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Entry is one frame of a session's event log: a complete JSON-RPC message, encoded once for every client.
type Entry struct {
	Seq   uint64
	Kind  Kind
	Frame []byte
	// offset is the total size of all frames appended before this one; head offset minus an entry's offset is
	// how many bytes a reader positioned before it still has to send.
	offset int64
}

// ErrTruncated means the log no longer holds the frame after the requested seq: the client must resync.
var ErrTruncated = errors.New("log truncated")

// ErrLogClosed is an append to a closed log (its session ended).
var ErrLogClosed = errors.New("log closed")

// LogLimits bounds a log. Zero means unbounded.
type LogLimits struct {
	MaxFrames int
	MaxBytes  int64
}

// Log is a session's append-only event log. Every frame a client may see gets a seq, contiguous from 1. The
// log never waits for a reader: readers poll with Read and wait on the channel it returns, so fan-out costs
// the appender one channel close, however many clients there are. Oldest frames are trimmed past the limits.
type Log struct {
	limits LogLimits // Static after construction.

	mu sync.Mutex
	// ring holds the frames first..next-1 from ring[start], wrapping; its length is 0 or a power of two and
	// doubles when full, so appends and trims move no entries and leave no garbage. Guarded by mu.
	ring  []Entry
	start int           // Guarded by mu; index in ring of seq first.
	first uint64        // Guarded by mu; seq of the oldest frame held (next when empty).
	next  uint64        // Guarded by mu; seq the next append gets.
	bytes int64         // Guarded by mu; size of the frames held.
	total int64         // Guarded by mu; size of every frame ever appended.
	wake  chan struct{} // Guarded by mu; closed on close, and on an append when handedOut (then replaced).
	// handedOut is set when Read gave out wake: only then must the next append close it. Appends that no
	// reader can be waiting for (a flood outrunning its readers) cost no channel. Guarded by mu.
	handedOut bool
	head      atomic.Uint64 // Written under mu; read without it by subscribers checking their lag per frame.
	totalNow  atomic.Int64  // total, written under mu; read without it by subscribers checking their lag per frame.
	closed    bool          // Guarded by mu.
	// pin, when set (store modes), is the seq up to which the store acknowledged frames: trim keeps later
	// frames until they exceed pinMaxLag bytes. nil in memory mode. Guarded by mu (the pointer; the value is
	// written by the persister).
	pin       *atomic.Uint64
	pinMaxLag int64 // Guarded by mu.
}

// NewLog returns an empty log.
func NewLog(limits LogLimits) *Log {
	return &Log{limits: limits, first: 1, next: 1, wake: make(chan struct{})}
}

// Append adds the frame of kind that encode builds for the next seq and returns that seq. encode runs under
// the log's lock, so seq order is frame order; it must only encode. An encode error appends nothing.
func (l *Log) Append(kind Kind, encode func(seq uint64) ([]byte, error)) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrLogClosed
	}
	seq := l.next
	frame, err := encode(seq)
	if err != nil {
		return 0, err
	}
	l.pushLocked(seq, kind, frame)
	return seq, nil
}

// Put adds a frame that already has its seq (hydration from the store). seq must follow the head, or the
// log must be empty (the ring then starts at seq); a larger seq is a gap: the held frames are dropped as a
// trim would drop them, so readers before seq get ErrTruncated and resync. frame is kept, not copied.
func (l *Log) Put(seq uint64, kind Kind, frame []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrLogClosed
	case seq == 0:
		return fmt.Errorf("%w: seq 0", ErrSeqOrder)
	case l.next == l.first: // empty
		l.first, l.next = seq, seq
	case seq < l.next:
		return fmt.Errorf("%w: seq %d is not after the head %d", ErrSeqOrder, seq, l.next-1)
	case seq > l.next: // a gap
		l.dropAllLocked()
		l.first, l.next = seq, seq
	}
	l.pushLocked(seq, kind, frame)
	return nil
}

// ErrSeqOrder is Put given a seq at or before the log's head.
var ErrSeqOrder = errors.New("log: seq out of order")

// pushLocked stores frame as seq == next, trims, and wakes readers: what Append and Put share.
func (l *Log) pushLocked(seq uint64, kind Kind, frame []byte) {
	n := int(l.next - l.first)
	if n == len(l.ring) {
		l.grow()
	}
	l.ring[(l.start+n)&(len(l.ring)-1)] = Entry{Seq: seq, Kind: kind, Frame: frame, offset: l.total}
	l.next++
	l.head.Store(seq)
	l.bytes += int64(len(frame))
	l.total += int64(len(frame))
	l.totalNow.Store(l.total)
	l.trim()
	if l.handedOut {
		close(l.wake)
		l.wake = make(chan struct{})
		l.handedOut = false
	}
}

// dropAllLocked empties the ring (a gap): the frames go as a trim would drop them.
func (l *Log) dropAllLocked() {
	for n := int(l.next - l.first); n > 0; n-- {
		*l.at(0) = Entry{}
		l.start = (l.start + 1) & (len(l.ring) - 1)
		l.first++
	}
	l.bytes = 0
}

// grow doubles the ring (from 16), keeping the frames in order from index 0.
func (l *Log) grow() {
	n := int(l.next - l.first)
	r := make([]Entry, max(16, 2*len(l.ring)))
	if n > 0 {
		k := copy(r, l.ring[l.start:])
		copy(r[k:n], l.ring[:l.start])
	}
	l.ring, l.start = r, 0
}

// at returns the entry of seq first+i (i < next-first).
func (l *Log) at(i int) *Entry { return &l.ring[(l.start+i)&(len(l.ring)-1)] }

// trim drops the oldest frames past the limits, always keeping the newest one.
func (l *Log) trim() {
	for n := int(l.next - l.first); n > 1 &&
		(l.limits.MaxFrames > 0 && n > l.limits.MaxFrames ||
			l.limits.MaxBytes > 0 && l.bytes > l.limits.MaxBytes); n-- {
		e := l.at(0)
		if l.pin != nil && e.Seq > l.pin.Load() && l.bytes <= l.pinMaxLag {
			break // not yet stored: the ring is the write-behind queue
		}
		l.bytes -= int64(len(e.Frame))
		*e = Entry{}
		l.start = (l.start + 1) & (len(l.ring) - 1)
		l.first++
	}
}

// Pin makes the log keep frames the store has not acknowledged: the caller stores the acknowledged seq in the
// returned value. Past maxLagBytes held, frames are trimmed anyway (the store then records a gap).
func (l *Log) Pin(maxLagBytes int64) *atomic.Uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pin == nil {
		l.pin = new(atomic.Uint64)
		l.pin.Store(l.first - 1)
	}
	l.pinMaxLag = maxLagBytes
	return l.pin
}

// ReadResult is what Read returns.
type ReadResult struct {
	Entries []Entry
	// Wake is closed when there is more to read (an append or close after this read).
	Wake <-chan struct{}
	// Head is the seq of the newest frame (0 when empty); LagBytes how many bytes lie after the cursor.
	Head     uint64
	LagBytes int64
	Closed   bool
}

// Read returns up to max entries with seq > after (appended to dst[:0]). ErrTruncated when after+1 was
// trimmed. Entries share frame bytes with the log; frames are never modified after append.
func (l *Log) Read(after uint64, max int, dst []Entry) (ReadResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := ReadResult{Wake: l.wake, Head: l.next - 1, Closed: l.closed}
	l.handedOut = true
	if after+1 < l.first {
		return res, ErrTruncated
	}
	if after >= l.next-1 {
		res.Entries = dst[:0]
		return res, nil
	}
	i := int(after + 1 - l.first)
	res.LagBytes = l.total - l.at(i).offset
	end := min(int(l.next-l.first), i+max)
	// [i, end) in ring order is at most two runs of the ring.
	from, to := (l.start+i)&(len(l.ring)-1), (l.start+end)&(len(l.ring)-1)
	if from < to || end-i == 0 {
		res.Entries = append(dst[:0], l.ring[from:from+end-i]...)
	} else {
		res.Entries = append(append(dst[:0], l.ring[from:]...), l.ring[:to]...)
	}
	return res, nil
}

// LagBytes is how many bytes lie after seq after (ReadResult.LagBytes), ErrTruncated when after+1 was
// trimmed. Unlike Read it hands out no wake, so the next append does not allocate one for it: for
// counters (a persister's stats), not for readers that wait.
func (l *Log) LagBytes(after uint64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after+1 < l.first {
		return 0, ErrTruncated
	}
	if after >= l.next-1 {
		return 0, nil
	}
	return l.total - l.at(int(after+1-l.first)).offset, nil
}

// Head is the seq of the newest frame, read without locking.
func (l *Log) Head() uint64 { return l.head.Load() }

// Bounds returns the seq of the oldest frame held and of the newest (first > last when empty).
func (l *Log) Bounds() (first, last uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first, l.next - 1
}

// Nudge wakes the readers waiting on the log without appending: they read nothing new and look at what else
// changed (presence, a subscriber's lost access).
func (l *Log) Nudge() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || !l.handedOut {
		return
	}
	close(l.wake)
	l.wake = make(chan struct{})
	l.handedOut = false
}

// Close wakes every reader for the last time; later appends fail.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.wake)
}

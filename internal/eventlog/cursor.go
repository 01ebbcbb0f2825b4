package eventlog

import "errors"

// ErrEvicted ends a subscriber that lags past its FollowLimits: it resumes from its last seq.
var ErrEvicted = errors.New("subscriber too slow")

// Cursor is one subscriber's position in a session's log and the accounting of its lag: the one way every
// face (Follow for `/ws` and SSE, the `/acp` writer) reads a log. Lag counts only what was appended since the
// subscriber started: frames up to replayUntil are history, and replaying history is not lag. Owned by the
// subscriber's writer goroutine.
type Cursor struct {
	// Static after construction.
	log         *Log
	replayUntil uint64
	lim         FollowLimits

	// Owned by the writer goroutine.
	pos    uint64 // seq of the last frame handled
	warned bool   // a Lag warning was returned and the subscriber has not caught up since
	buf    []Entry
}

// FollowLimits bounds how far a subscriber may lag behind live frames. Zero means unbounded.
type FollowLimits struct {
	Frames int
	Bytes  int64
}

// Lag is how far a subscriber is behind the head, reported once when it passes 75 % of a limit.
type Lag struct {
	Frames    int
	Bytes     int64
	MaxFrames int
	MaxBytes  int64
}

// Batch is what Cursor.Next read.
type Batch struct {
	// Entries follow the cursor; they are valid until the next Next.
	Entries []Entry
	// Wake is closed when there is more to read.
	Wake   <-chan struct{}
	Closed bool // the log is closed (and fully read when Entries is empty)
	// Warn is set when the subscriber passed 75 % of a limit; again only after it caught up.
	Warn *Lag
}

// NewCursor returns a cursor on l after seq from; frames up to replayUntil are history.
func NewCursor(l *Log, from, replayUntil uint64, lim FollowLimits) *Cursor {
	return &Cursor{log: l, pos: from, replayUntil: replayUntil, lim: lim}
}

// Pos is the seq of the last frame handled.
func (c *Cursor) Pos() uint64 { return c.pos }

// Replaying reports whether the cursor is still in the history it started with.
func (c *Cursor) Replaying() bool { return c.pos < c.replayUntil }

// Advance records the frame of seq as handled (sent or skipped).
func (c *Cursor) Advance(seq uint64) { c.pos = seq }

// Next reads up to 256 frames after the cursor. It fails with ErrTruncated when the log no longer holds the
// next frame, and with ErrEvicted when the subscriber lags past a limit: checked as soon as the read shows
// it, before writing, so a writer that was blocked on a full socket never "catches up" on frames it never
// delivered.
func (c *Cursor) Next() (Batch, error) {
	res, err := c.log.Read(c.pos, 256, c.buf)
	b := Batch{Wake: res.Wake, Closed: res.Closed}
	if err != nil {
		return b, err
	}
	c.buf, b.Entries = res.Entries, res.Entries
	if base := max(c.pos, c.replayUntil); res.Head > base {
		frames, bytes := int(res.Head-base), res.LagBytes
		if c.pos < c.replayUntil {
			bytes = 0
		}
		if c.over(frames, bytes) {
			return b, ErrEvicted
		}
		if !c.warned && c.near(frames, bytes) {
			c.warned = true
			b.Warn = &Lag{Frames: frames, Bytes: bytes, MaxFrames: c.lim.Frames, MaxBytes: c.lim.Bytes}
		}
	} else {
		c.warned = false
	}
	return b, nil
}

// Check is the lag check frame by frame, before e is written: the socket may have blocked during a batch.
func (c *Cursor) Check(e Entry) error {
	if c.pos < c.replayUntil {
		return nil
	}
	if c.over(int(c.log.Head()-c.pos), c.log.totalNow.Load()-e.offset) {
		return ErrEvicted
	}
	return nil
}

func (c *Cursor) over(frames int, bytes int64) bool {
	return c.lim.Frames > 0 && frames > c.lim.Frames || c.lim.Bytes > 0 && bytes > c.lim.Bytes
}

func (c *Cursor) near(frames int, bytes int64) bool {
	return c.lim.Frames > 0 && frames*4 >= c.lim.Frames*3 || c.lim.Bytes > 0 && bytes*4 >= c.lim.Bytes*3
}

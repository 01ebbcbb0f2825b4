package stream

import (
	"errors"
	"slices"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// Start is where a subscriber's stream begins.
type Start struct {
	// Cursor is the seq after which frames are sent.
	Cursor uint64
	// ReplayUntil is the head at subscription time: frames up to it are replay; once sent, the subscriber gets
	// the pending permission requests it has not seen and `_gateway/replay_complete`.
	ReplayUntil uint64
	// Resync is non-empty when the requested position cannot be served ("epoch_changed", "log_truncated",
	// "invalid_cursor"): the subscriber gets `_gateway/resync_required` and then live frames after the head.
	Resync      string
	EarliestSeq uint64
	HeadSeq     uint64
}

// Sink receives a subscriber's stream. Frame gets logged frames with their seq, or with seq 0 for a pending
// permission request re-sent after the replay (it was logged before the cursor: it must not move it; its frame
// says `_meta.gateway.resent: true` for clients, see PendingFrames); Note gets the gateway's
// per-subscriber notifications that are not part of the log (replay_complete, resync_required, slow_client).
// Wait is called when the subscriber has caught up: it returns when wake is closed (more to read), or with an
// error to end the stream; it is where a face also serves its own events (pings, replies, heartbeats).
type Sink interface {
	Frame(seq uint64, frame []byte) error
	Note(method string, params any) error
	Wait(wake <-chan struct{}) error
}

// Source is what Follow reads of the session it streams.
type Source interface {
	// NewCursor returns a cursor on the session's log after seq from; frames up to replayUntil are history.
	NewCursor(from, replayUntil uint64, lim eventlog.FollowLimits) *eventlog.Cursor
	// PendingFrames are the pending requests' frames logged at or before upTo, re-stamped as resent.
	PendingFrames(upTo uint64) []eventlog.Entry
	CurrentEpoch() string
	// LogBounds are the first and last seq the log holds.
	LogBounds() (first, head uint64)
	// EndOfLog is why the log closed: ErrShutdown, ErrStoodDown or ErrSessionClosed.
	EndOfLog() error
}

// Viewer is the subscriber a stream is for, when a principal opened it.
type Viewer interface {
	// Lost is closed when the subscriber's principal may no longer see the session.
	Lost() <-chan struct{}
	// Published is the last published watcher list and its version; Watchers is the list now.
	Published() (uint64, []Watcher)
	Watchers() []Watcher
}

// Follow streams src's log to sink from start: replay, then the pending permission requests the replay did
// not include and `_gateway/replay_complete`, then live frames until the session closes (src.EndOfLog), the
// subscriber falls too far behind (a `_gateway/slow_client` warning at 75 %, then ErrEvicted), or sink
// returns an error. A viewer (nil for nobody in particular) also gets `_gateway/presence` and ends with
// ErrLost. The agent and the log never wait for it.
func Follow(src Source, v Viewer, start Start, sink Sink, lim eventlog.FollowLimits) error {
	var pres presenceSent
	replayed := false
	if start.Resync != "" {
		// Nothing partial: the subscriber reloads the snapshot (`GET /v1/sessions/{id}`, which reflects at
		// least headSeq) and ignores live frames with seq <= its snapshot's.
		if err := sink.Note("_gateway/resync_required", map[string]any{
			"reason": start.Resync, "earliestSeq": start.EarliestSeq, "headSeq": start.HeadSeq, "epoch": src.CurrentEpoch(),
		}); err != nil {
			return err
		}
		replayed = true
	}
	finishReplay := func(cursor uint64) error {
		replayed = true
		for _, e := range src.PendingFrames(start.Cursor) {
			if err := sink.Frame(0, e.Frame); err != nil {
				return err
			}
		}
		return sink.Note("_gateway/replay_complete", map[string]any{"lastSeq": cursor, "epoch": src.CurrentEpoch()})
	}
	c := src.NewCursor(start.Cursor, start.ReplayUntil, lim)
	for {
		if v != nil {
			select {
			case <-v.Lost():
				return sessionerr.ErrLost
			default:
			}
		}
		if !replayed && c.Pos() >= start.ReplayUntil {
			if err := finishReplay(c.Pos()); err != nil {
				return err
			}
		}
		b, err := c.Next()
		switch {
		case errors.Is(err, eventlog.ErrTruncated):
			first, head := src.LogBounds()
			// The stream ends evicted whether or not the note reached the subscriber.
			_ = sink.Note("_gateway/resync_required", map[string]any{"reason": "log_truncated", "earliestSeq": first, "headSeq": head, "epoch": src.CurrentEpoch()})
			return eventlog.ErrEvicted
		case err != nil:
			return err
		}
		if b.Warn != nil {
			if err := sink.Note("_gateway/slow_client", map[string]any{"lagFrames": b.Warn.Frames, "lagBytes": b.Warn.Bytes, "maxFrames": b.Warn.MaxFrames, "maxBytes": b.Warn.MaxBytes}); err != nil {
				return err
			}
		}
		for _, e := range b.Entries {
			if err := c.Check(e); err != nil {
				return err
			}
			if err := sink.Frame(e.Seq, e.Frame); err != nil {
				return err
			}
			c.Advance(e.Seq)
			if !replayed && e.Seq >= start.ReplayUntil {
				if err := finishReplay(e.Seq); err != nil {
					return err
				}
			}
		}
		if len(b.Entries) > 0 {
			continue
		}
		if b.Closed {
			return src.EndOfLog()
		}
		if v != nil && replayed {
			if err := pres.send(v, sink); err != nil {
				return err
			}
		}
		if err := sink.Wait(b.Wake); err != nil {
			return err
		}
	}
}

// presenceSent is what a subscriber was last sent of the session's presence.
type presenceSent struct {
	sent    bool
	version uint64
	list    []Watcher
}

// send sends `_gateway/presence` when the published watchers (or, the first time, the current ones) differ
// from what was last sent.
func (p *presenceSent) send(v Viewer, sink Sink) error {
	ver, list := v.Published()
	if p.sent && ver == p.version {
		return nil
	}
	if !p.sent {
		list = v.Watchers() // the first one is current, the subscriber itself included
	}
	p.version = ver
	if p.sent && slices.Equal(list, p.list) {
		return nil
	}
	p.sent, p.list = true, list
	return sink.Note("_gateway/presence", map[string]any{"watchers": list})
}

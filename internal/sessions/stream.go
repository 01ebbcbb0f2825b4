package sessions

import (
	"errors"
	"fmt"
	"time"
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

// StartAt decides where a subscriber resumes. Same epoch (or an older one of the epoch chain whose frames up
// to after are the current epoch's too) and the log still holds after+1: replay from there.
// Anything else is a resync, never a partial recovery. Without after, the whole log is replayed (or a resync
// when it was trimmed).
func (s *Session) StartAt(after uint64, hasAfter bool, epoch string) Start {
	first, head := s.log.Bounds()
	st := Start{Cursor: after, ReplayUntil: head, EarliestSeq: first, HeadSeq: head}
	switch {
	case hasAfter && epoch != "" && epoch != s.Epoch && !s.sharesPrefix(epoch, after):
		st.Resync = "epoch_changed"
	case after > head:
		st.Resync = "invalid_cursor"
	case after+1 < first:
		st.Resync = "log_truncated"
	}
	if st.Resync != "" {
		st.Cursor = head
	}
	return st
}

// Attach registers a subscriber (a socket or an event stream); false when the session is at its client cap.
// The returned detach must be called exactly once.
func (s *Session) Attach() (detach func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if max := s.reg.cfg.MaxClients; max > 0 && s.clients >= max {
		return nil, false
	}
	s.clients++
	return func() {
		s.mu.Lock()
		s.clients--
		s.lastActive = s.reg.now()
		s.mu.Unlock()
	}, true
}

// Clients is the number of attached subscribers.
func (s *Session) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients
}

// idleSince reports whether the session has had no subscriber and no turn since before t.
func (s *Session) idleSince(t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients == 0 && s.turn == nil && s.status != StatusStarting && s.lastActive.Before(t)
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

// Errors that end a Follow.
var (
	ErrEvicted       = errors.New("subscriber too slow")
	ErrSessionClosed = errors.New("session closed")
	// ErrShutdown is ErrSessionClosed when the gateway's shutdown closed the session: faces close with 1001
	// ("come back later") rather than "session closed", once the subscriber has every frame that says why.
	ErrShutdown = fmt.Errorf("%w by the gateway's shutdown", ErrSessionClosed)
)

// Follow streams the session's log to sink from start: replay, then the pending permission requests the
// replay did not include and `_gateway/replay_complete`, then live frames until the session closes
// (ErrSessionClosed), the subscriber falls too far behind (a `_gateway/slow_client` warning at 75 %, then
// ErrEvicted), or sink returns an error. The agent and the log never wait for it.
func (s *Session) Follow(start Start, sink Sink, lim FollowLimits) error {
	replayed := false
	if start.Resync != "" {
		// Nothing partial: the subscriber reloads the snapshot (`GET /v1/sessions/{id}`, which reflects at
		// least headSeq) and ignores live frames with seq <= its snapshot's.
		if err := sink.Note("_gateway/resync_required", map[string]any{
			"reason": start.Resync, "earliestSeq": start.EarliestSeq, "headSeq": start.HeadSeq, "epoch": s.Epoch,
		}); err != nil {
			return err
		}
		replayed = true
	}
	finishReplay := func(cursor uint64) error {
		replayed = true
		for _, e := range s.PendingFrames(start.Cursor) {
			if err := sink.Frame(0, e.Frame); err != nil {
				return err
			}
		}
		return sink.Note("_gateway/replay_complete", map[string]any{"lastSeq": cursor, "epoch": s.Epoch})
	}
	c := s.NewCursor(start.Cursor, start.ReplayUntil, lim)
	for {
		if !replayed && c.Pos() >= start.ReplayUntil {
			if err := finishReplay(c.Pos()); err != nil {
				return err
			}
		}
		b, err := c.Next()
		switch {
		case errors.Is(err, ErrTruncated):
			first, head := s.log.Bounds()
			_ = sink.Note("_gateway/resync_required", map[string]any{"reason": "log_truncated", "earliestSeq": first, "headSeq": head, "epoch": s.Epoch})
			return ErrEvicted
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
			if s.reg.shuttingDown() {
				return ErrShutdown
			}
			return ErrSessionClosed
		}
		if err := sink.Wait(b.Wake); err != nil {
			return err
		}
	}
}

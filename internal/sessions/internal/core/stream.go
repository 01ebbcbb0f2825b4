package core

import (
	"errors"
	"slices"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
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
	if hasAfter && after > s.log.Head() {
		s.run.AwaitResume(after, epoch) // a client that read frames on a faster node
	}
	// Under mu: a follower's log and its epoch chain move together there (applyStored).
	s.mu.Lock()
	first, head := s.log.Bounds()
	changed := hasAfter && epoch != "" && epoch != s.epochLocked() && !s.sharesPrefix(epoch, after)
	s.mu.Unlock()
	st := Start{Cursor: after, ReplayUntil: head, EarliestSeq: first, HeadSeq: head}
	switch {
	case changed:
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

// Attach registers a subscriber nobody in particular opened (it is not counted in presence); false when the
// session is at its client cap. The returned detach must be called exactly once.
func (s *Session) Attach() (detach func(), ok bool) {
	sub, ok := s.AttachAs(principal.Principal{})
	if !ok {
		return nil, false
	}
	return sub.Detach, true
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
	return s.clients == 0 && s.turn == nil && s.status != store.StatusStarting && s.lastActive.Before(t)
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

// Follow streams the session's log to sink from start: replay, then the pending permission requests the
// replay did not include and `_gateway/replay_complete`, then live frames until the session closes
// (ErrSessionClosed), the subscriber falls too far behind (a `_gateway/slow_client` warning at 75 %, then
// ErrEvicted), or sink returns an error. The agent and the log never wait for it.
func (s *Session) Follow(start Start, sink Sink, lim eventlog.FollowLimits) error {
	return s.follow(nil, start, sink, lim)
}

// Follow is Session.Follow for a subscriber: after the replay it also gets `_gateway/presence {watchers}`
// once and again whenever the published watchers differ from what it was last sent (not logged, no seq), and
// the stream ends with ErrLost when the subscriber's principal may no longer see the session.
func (sub *Subscriber) Follow(start Start, sink Sink, lim eventlog.FollowLimits) error {
	return sub.s.follow(sub, start, sink, lim)
}

// presenceSent is what a subscriber was last sent of the session's presence.
type presenceSent struct {
	sent    bool
	version uint64
	list    []Watcher
}

// send sends `_gateway/presence` when the published watchers (or, the first time, the current ones) differ
// from what was last sent.
func (p *presenceSent) send(s *Session, sink Sink) error {
	v, list := s.publishedPresence()
	if p.sent && v == p.version {
		return nil
	}
	if !p.sent {
		list = s.Watchers() // the first one is current, the subscriber itself included
	}
	p.version = v
	if p.sent && slices.Equal(list, p.list) {
		return nil
	}
	p.sent, p.list = true, list
	return sink.Note("_gateway/presence", map[string]any{"watchers": list})
}

// NewCursor returns a cursor on the session's log after seq from; frames up to replayUntil are history.
func (s *Session) NewCursor(from, replayUntil uint64, lim eventlog.FollowLimits) *eventlog.Cursor {
	return eventlog.NewCursor(s.log, from, replayUntil, lim)
}

func (s *Session) follow(sub *Subscriber, start Start, sink Sink, lim eventlog.FollowLimits) error {
	var pres presenceSent
	replayed := false
	if start.Resync != "" {
		// Nothing partial: the subscriber reloads the snapshot (`GET /v1/sessions/{id}`, which reflects at
		// least headSeq) and ignores live frames with seq <= its snapshot's.
		if err := sink.Note("_gateway/resync_required", map[string]any{
			"reason": start.Resync, "earliestSeq": start.EarliestSeq, "headSeq": start.HeadSeq, "epoch": s.CurrentEpoch(),
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
		return sink.Note("_gateway/replay_complete", map[string]any{"lastSeq": cursor, "epoch": s.CurrentEpoch()})
	}
	c := s.NewCursor(start.Cursor, start.ReplayUntil, lim)
	for {
		if sub != nil {
			select {
			case <-sub.lost:
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
			first, head := s.log.Bounds()
			_ = sink.Note("_gateway/resync_required", map[string]any{"reason": "log_truncated", "earliestSeq": first, "headSeq": head, "epoch": s.CurrentEpoch()})
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
			if s.host.ShuttingDown() {
				return sessionerr.ErrShutdown
			}
			if s.stoodDownNow() {
				return sessionerr.ErrStoodDown
			}
			return sessionerr.ErrSessionClosed
		}
		if sub != nil && replayed {
			if err := pres.send(s, sink); err != nil {
				return err
			}
		}
		if err := sink.Wait(b.Wake); err != nil {
			return err
		}
	}
}

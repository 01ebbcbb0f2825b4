package core

import (
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/stream"
	"github.com/acp-gateway/gateway/internal/store"
)

// StartAt decides where a subscriber resumes. Same epoch (or an older one of the epoch chain whose frames up
// to after are the current epoch's too) and the log still holds after+1: replay from there.
// Anything else is a resync, never a partial recovery. Without after, the whole log is replayed (or a resync
// when it was trimmed).
func (s *Session) StartAt(after uint64, hasAfter bool, epoch string) stream.Start {
	if hasAfter && after > s.log.Head() {
		s.run.AwaitResume(after, epoch) // a client that read frames on a faster node
	}
	// Under mu: a follower's log and its epoch chain move together there (applyStored).
	s.mu.Lock()
	first, head := s.log.Bounds()
	changed := hasAfter && epoch != "" && epoch != s.epochLocked() && !s.sharesPrefix(epoch, after)
	s.mu.Unlock()
	return stream.StartFrom(first, head, after, changed)
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

// IdleSince reports whether the session has had no subscriber and no turn since before t.
func (c Control) IdleSince(t time.Time) bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients == 0 && s.state.Turn == nil && s.state.Status != store.StatusStarting && s.lastActive.Before(t)
}

// Follow streams the session's log to sink from start (stream.Follow): replay, then the pending permission
// requests the replay did not include and `_gateway/replay_complete`, then live frames until the session
// closes. The agent and the log never wait for it.
func (s *Session) Follow(start stream.Start, sink stream.Sink, lim eventlog.FollowLimits) error {
	return stream.Follow(streamOf{s}, nil, start, sink, lim)
}

// Follow is Session.Follow for a subscriber: after the replay it also gets `_gateway/presence {watchers}`
// once and again whenever the published watchers differ from what it was last sent (not logged, no seq), and
// the stream ends with ErrLost when the subscriber's principal may no longer see the session.
func (sub *Subscriber) Follow(start stream.Start, sink stream.Sink, lim eventlog.FollowLimits) error {
	return stream.Follow(streamOf{sub.s}, sub, start, sink, lim)
}

// NewCursor returns a cursor on the session's log after seq from; frames up to replayUntil are history.
func (s *Session) NewCursor(from, replayUntil uint64, lim eventlog.FollowLimits) *eventlog.Cursor {
	return eventlog.NewCursor(s.log, from, replayUntil, lim)
}

// streamOf is what stream.Follow reads of the session.
type streamOf struct{ *Session }

// LogBounds are the first and last seq the session's log holds.
func (v streamOf) LogBounds() (first, head uint64) { return v.log.Bounds() }

// EndOfLog is why the session's log closed.
func (v streamOf) EndOfLog() error {
	switch {
	case v.host.ShuttingDown():
		return sessionerr.ErrShutdown
	case v.stoodDownNow():
		return sessionerr.ErrStoodDown
	}
	return sessionerr.ErrSessionClosed
}

package core

import (
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/stream"
)

// Who streams a session is its presence (stream.Presence, its own lock): each Subscriber opened by a
// principal is counted there until it detaches, and subscribers hear of changes through their Follow.

// Subscriber is one attached stream of a session (Session.AttachAs), counted against the session's client
// cap and in its presence.
type Subscriber struct {
	// Static after construction.
	s   *Session
	who principal.Principal

	ends stream.Ends // Lost and Detached
}

// Detached is closed once the subscription has ended.
func (sub *Subscriber) Detached() <-chan struct{} { return sub.ends.Detached() }

// Lost is closed when the subscriber's principal may no longer see the session (its share ended): every
// face then ends the stream as if the session did not exist.
func (sub *Subscriber) Lost() <-chan struct{} { return sub.ends.Lost() }

// Session is the session subscribed to.
func (sub *Subscriber) Session() *Session { return sub.s }

// Published is the session's last published watcher list and its version.
func (sub *Subscriber) Published() (uint64, []stream.Watcher) { return sub.s.presence.Published() }

// Watchers lists who streams the session now.
func (sub *Subscriber) Watchers() []stream.Watcher { return sub.s.Watchers() }

// Detach ends the subscription; later calls do nothing.
func (sub *Subscriber) Detach() {
	sub.ends.EndOnce(func() {
		s := sub.s
		s.mu.Lock()
		s.clients--
		s.lastActive = s.host.Now()
		s.mu.Unlock()
		if sub.who.IsZero() {
			return
		}
		s.presence.Remove(sub)
		s.presenceChanged()
	})
}

// AttachAs registers a subscriber opened by who (a socket or an event stream); false when the session is at
// its client cap. who (unless nobody) is counted in the session's presence until Detach.
func (s *Session) AttachAs(who principal.Principal) (*Subscriber, bool) {
	s.mu.Lock()
	if max := s.cfg.MaxClients; max > 0 && s.clients >= max {
		s.mu.Unlock()
		return nil, false
	}
	s.clients++
	s.mu.Unlock()
	sub := &Subscriber{s: s, who: who, ends: stream.NewEnds()}
	if who.IsZero() {
		return sub, true
	}
	s.presence.Add(sub, who)
	s.presenceChanged()
	return sub, true
}

// presenceChanged schedules a publish after PresenceDelay unless one is pending.
func (s *Session) presenceChanged() { s.presence.Changed(s.publishPresence) }

// publishPresence publishes the watchers and, when they changed, wakes the log's readers: each Follow sends
// `_gateway/presence` when it sees a version it has not sent.
func (s *Session) publishPresence() {
	if s.presence.Publish(s.roleOf) {
		s.log.Nudge()
	}
}

// Watchers lists who streams the session now, one entry per principal, the owner first.
func (s *Session) Watchers() []stream.Watcher { return s.presence.Watchers(s.roleOf) }

// roleOf names p's role in s: owner, admin, collaborator or viewer; "" when p may not see it.
func (s *Session) roleOf(p principal.Principal) string {
	return access.RoleOf(s.Owner.ID, &s.shares, p)
}

// sharesChanged applies a change of the shares to open streams: the subscribers of a principal who may no
// longer see the session lose it (Lost), a delegate whose principal may no longer act gives back the fs/* and
// terminal/* requests it holds, and presence is published again (roles change).
func (s *Session) sharesChanged() {
	s.svc.RevokeDelegateCalls()
	lostAny := false
	for sub, who := range s.presence.Subscribers() {
		if !s.VisibleTo(who) {
			sub.ends.MarkLost()
			lostAny = true
		}
	}
	if lostAny {
		s.log.Nudge() // Follow notices Lost when it wakes
	}
	s.presenceChanged()
}

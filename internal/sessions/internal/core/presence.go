package core

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/store"
)

// Watcher is one principal currently streaming a session (a session WebSocket, an event stream, an `/acp`
// connection that created or loaded it), as presence lists it.
type Watcher struct {
	Principal string `json:"principal"`
	Name      string `json:"name"`
	Role      string `json:"role"`  // in this session: owner, admin, collaborator or viewer
	Faces     int    `json:"faces"` // how many of their connections stream it
}

// PresenceDelay is how long presence changes are gathered before subscribers hear of them: a reconnect
// storm costs each subscriber at most one `_gateway/presence` frame per delay.
const PresenceDelay = 500 * time.Millisecond

// presence is who streams a session, with its own lock (taken alone, never with Session.mu or shares.mu).
// Changes are published after PresenceDelay; subscribers compare the published version with what they sent.
type presence struct {
	mu        sync.Mutex
	subs      map[*Subscriber]struct{} // Guarded by mu; the attached subscribers with a principal.
	scheduled bool                     // Guarded by mu; a publish is pending.
	version   uint64                   // Guarded by mu; bumped by each publish that changed list.
	list      []Watcher                // Guarded by mu; the last published list.
}

// Subscriber is one attached stream of a session (Session.AttachAs), counted against the session's client
// cap and in its presence.
type Subscriber struct {
	// Static after construction.
	s   *Session
	who principal.Principal

	lost       chan struct{} // closed when who may no longer see the session (a share ended)
	lostOnce   sync.Once
	detached   chan struct{} // closed by Detach
	detachOnce sync.Once
}

// Detached is closed once the subscription has ended.
func (sub *Subscriber) Detached() <-chan struct{} { return sub.detached }

// Session is the session subscribed to.
func (sub *Subscriber) Session() *Session { return sub.s }

// Lost is closed when the subscriber's principal may no longer see the session (its share ended): every
// face then ends the stream as if the session did not exist.
func (sub *Subscriber) Lost() <-chan struct{} { return sub.lost }

// Detach ends the subscription; later calls do nothing.
func (sub *Subscriber) Detach() {
	sub.detachOnce.Do(func() {
		close(sub.detached)
		s := sub.s
		s.mu.Lock()
		s.clients--
		s.lastActive = s.host.Now()
		s.mu.Unlock()
		if sub.who.IsZero() {
			return
		}
		s.presence.mu.Lock()
		delete(s.presence.subs, sub)
		s.presence.mu.Unlock()
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
	sub := &Subscriber{s: s, who: who, lost: make(chan struct{}), detached: make(chan struct{})}
	if who.IsZero() {
		return sub, true
	}
	s.presence.mu.Lock()
	if s.presence.subs == nil {
		s.presence.subs = map[*Subscriber]struct{}{}
	}
	s.presence.subs[sub] = struct{}{}
	s.presence.mu.Unlock()
	s.presenceChanged()
	return sub, true
}

// hasClients reports whether a subscriber is attached.
func (s *Session) hasClients() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients > 0
}

// presenceChanged schedules a publish after PresenceDelay unless one is pending: changes until then fold
// into it.
func (s *Session) presenceChanged() {
	s.presence.mu.Lock()
	defer s.presence.mu.Unlock()
	if s.presence.scheduled {
		return
	}
	s.presence.scheduled = true
	time.AfterFunc(PresenceDelay, s.publishPresence)
}

// publishPresence computes the watchers and, when they changed, bumps the version and wakes the log's
// readers: each Follow sends `_gateway/presence` when it sees a version it has not sent.
func (s *Session) publishPresence() {
	s.presence.mu.Lock()
	s.presence.scheduled = false // a change from now on schedules another publish
	s.presence.mu.Unlock()
	list := s.Watchers()
	s.presence.mu.Lock()
	changed := !slices.Equal(list, s.presence.list)
	if changed {
		s.presence.list = list
		s.presence.version++
	}
	s.presence.mu.Unlock()
	if changed {
		s.log.Nudge()
	}
}

// publishedPresence is the last published watcher list and its version.
func (s *Session) publishedPresence() (uint64, []Watcher) {
	s.presence.mu.Lock()
	defer s.presence.mu.Unlock()
	return s.presence.version, s.presence.list
}

// Watchers lists who streams the session now, one entry per principal, the owner first.
func (s *Session) Watchers() []Watcher {
	s.presence.mu.Lock()
	byID := map[string]*Watcher{}
	var who []principal.Principal
	for sub := range s.presence.subs {
		if w := byID[sub.who.ID]; w != nil {
			w.Faces++
			continue
		}
		byID[sub.who.ID] = &Watcher{Principal: sub.who.ID, Name: sub.who.Name, Faces: 1}
		who = append(who, sub.who)
	}
	s.presence.mu.Unlock()
	out := make([]Watcher, 0, len(who))
	for _, p := range who {
		w := byID[p.ID]
		w.Role = s.roleOf(p)
		if w.Role != "" {
			out = append(out, *w)
		}
	}
	slices.SortFunc(out, func(a, b Watcher) int {
		return cmp.Or(cmp.Compare(roleRank[a.Role], roleRank[b.Role]), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Principal, b.Principal))
	})
	return out
}

var roleRank = map[string]int{"owner": 0, "admin": 1, "collaborator": 2, "viewer": 3}

// roleOf names p's role in s: owner, admin, collaborator or viewer; "" when p may not see it.
func (s *Session) roleOf(p principal.Principal) string {
	switch {
	case !s.Owner.IsZero() && s.Owner.ID == p.ID:
		return "owner"
	case p.IsAdmin():
		return "admin"
	}
	switch s.AccessOf(p) {
	case AccessAct:
		return string(store.ShareCollaborator)
	case AccessView:
		return string(store.ShareViewer)
	}
	return ""
}

// sharesChanged applies a change of the shares to open streams: the subscribers of a principal who may no
// longer see the session lose it (Lost), a delegate whose principal may no longer act gives back the fs/* and
// terminal/* requests it holds, and presence is published again (roles change).
func (s *Session) sharesChanged() {
	s.svc.RevokeDelegateCalls()
	s.presence.mu.Lock()
	subs := make([]*Subscriber, 0, len(s.presence.subs))
	for sub := range s.presence.subs {
		subs = append(subs, sub)
	}
	s.presence.mu.Unlock()
	lostAny := false
	for _, sub := range subs {
		if !s.VisibleTo(sub.who) {
			sub.lostOnce.Do(func() { close(sub.lost) })
			lostAny = true
		}
	}
	if lostAny {
		s.log.Nudge() // Follow notices Lost when it wakes
	}
	s.presenceChanged()
}

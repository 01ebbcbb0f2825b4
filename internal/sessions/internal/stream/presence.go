package stream

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
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

// Presence is who streams a session, by subscriber K, with its own lock (taken alone, never with the
// session's or its shares'). Changes are published after PresenceDelay; subscribers compare the published
// version with what they sent.
type Presence[K comparable] struct {
	mu        sync.Mutex
	subs      map[K]principal.Principal // Guarded by mu; the attached subscribers with a principal.
	scheduled bool                      // Guarded by mu; a publish is pending.
	version   uint64                    // Guarded by mu; bumped by each publish that changed list.
	list      []Watcher                 // Guarded by mu; the last published list.
}

// Add counts sub, opened by who, until Remove.
func (p *Presence[K]) Add(sub K, who principal.Principal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.subs == nil {
		p.subs = map[K]principal.Principal{}
	}
	p.subs[sub] = who
}

// Remove stops counting sub.
func (p *Presence[K]) Remove(sub K) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.subs, sub)
}

// Subscribers are the counted subscribers and who opened each.
func (p *Presence[K]) Subscribers() map[K]principal.Principal {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[K]principal.Principal, len(p.subs))
	for k, who := range p.subs {
		out[k] = who
	}
	return out
}

// Changed schedules publish after PresenceDelay unless one is pending: changes until then fold into it.
func (p *Presence[K]) Changed(publish func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scheduled {
		return
	}
	p.scheduled = true
	time.AfterFunc(PresenceDelay, publish)
}

// Publish computes the watchers (roleOf names each principal's role, "" when it may not see the session)
// and, when they changed, bumps the version; it reports whether they changed, for the caller to wake the
// log's readers.
func (p *Presence[K]) Publish(roleOf func(principal.Principal) string) (changed bool) {
	p.mu.Lock()
	p.scheduled = false // a change from now on schedules another publish
	p.mu.Unlock()
	list := p.Watchers(roleOf)
	p.mu.Lock()
	defer p.mu.Unlock()
	changed = !slices.Equal(list, p.list)
	if changed {
		p.list = list
		p.version++
	}
	return changed
}

// Published is the last published watcher list and its version.
func (p *Presence[K]) Published() (uint64, []Watcher) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version, p.list
}

// Watchers lists who streams the session now, one entry per principal, the owner first. roleOf is called
// without the lock.
func (p *Presence[K]) Watchers(roleOf func(principal.Principal) string) []Watcher {
	p.mu.Lock()
	byID := map[string]*Watcher{}
	var who []principal.Principal
	for _, sw := range p.subs {
		if w := byID[sw.ID]; w != nil {
			w.Faces++
			continue
		}
		byID[sw.ID] = &Watcher{Principal: sw.ID, Name: sw.Name, Faces: 1}
		who = append(who, sw)
	}
	p.mu.Unlock()
	out := make([]Watcher, 0, len(who))
	for _, pr := range who {
		w := byID[pr.ID]
		w.Role = roleOf(pr)
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

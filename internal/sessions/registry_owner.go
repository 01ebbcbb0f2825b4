package sessions

import (
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// What the registry shows each principal (GetAs, ListAs: only the sessions owner.go's VisibleTo allows) and
// the per-user cap on the sessions a user owns.

// GetAs is Get for p: ErrNotFound for a session p may not see.
func (r *Registry) GetAs(p principal.Principal, id string) (*Session, error) {
	s, err := r.lookup(id)
	if err != nil || !s.VisibleTo(p) {
		return nil, sessionerr.ErrNotFound
	}
	if err := core.ControlOf(s).Hydrate(); err != nil {
		return nil, goneIfClosed(err)
	}
	if s.Status() == store.StatusClosed {
		return nil, sessionerr.ErrNotFound
	}
	return s, nil
}

// ListAs is List for p, with the followers of other nodes' sessions (mode c): only the sessions p may see,
// oldest first.
func (r *Registry) ListAs(p principal.Principal) []*Session {
	all := r.List()
	if r.cfg.Cluster != nil {
		all = append(all, r.followerList()...)
		sortSessions(all)
	}
	out := all[:0]
	for _, s := range all {
		if s.VisibleTo(p) {
			out = append(out, s)
		}
	}
	return out
}

// overUserCapLocked reports whether owner, a user, already has MaxSessionsPerUser attached sessions (detached
// ones do not count, as for the other limits). The caller holds r.mu.
func (r *Registry) overUserCapLocked(owner principal.Principal) bool {
	if r.cfg.MaxSessionsPerUser <= 0 || owner.IsZero() || owner.IsAdmin() {
		return false
	}
	return r.ownedLocked(owner) >= r.cfg.MaxSessionsPerUser
}

// ownedLocked counts the attached sessions owner owns. The caller holds r.mu.
func (r *Registry) ownedLocked(owner principal.Principal) int {
	n := 0
	for id, s := range r.sessions {
		if _, detached := r.detached[id]; s.Owner.ID == owner.ID && !detached {
			n++
		}
	}
	return n
}

// UserCap is the per-user session cap p is under and how many attached sessions p owns; max 0 means no
// per-user cap (admins, nobody, or no --max-sessions-per-user).
func (r *Registry) UserCap(p principal.Principal) (max, used int) {
	if r.cfg.MaxSessionsPerUser <= 0 || p.IsZero() || p.IsAdmin() {
		return 0, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg.MaxSessionsPerUser, r.ownedLocked(p)
}

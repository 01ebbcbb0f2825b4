package sessions

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// VisibleTo reports whether p may see s: admins see every session, users their own and those shared with
// them (share.go). Every face asks through GetAs and ListAs, so a session p may not see answers exactly as
// one that does not exist.
func (s *Session) VisibleTo(p principal.Principal) bool {
	return s.AccessOf(p) >= AccessView
}

// GetAs is Get for p: ErrNotFound for a session p may not see.
func (r *Registry) GetAs(p principal.Principal, id string) (*Session, error) {
	s, err := r.lookup(id)
	if err != nil || !s.VisibleTo(p) {
		return nil, sessionerr.ErrNotFound
	}
	if err := s.hydrate(); err != nil {
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

// withActor adds who to a `_gateway/*` notification's params as `actor: {principal, name}`, when a
// principal acted.
func withActor(params map[string]any, who principal.Principal) map[string]any {
	if !who.IsZero() {
		params["actor"] = who.Ref()
	}
	return params
}

// audit logs an audited action on s by who (nothing when nobody acted: the gateway's own code).
func (s *Session) audit(who principal.Principal, action string, attrs ...any) {
	if who.IsZero() {
		return
	}
	principal.Audit(s.logger, who, action, attrs...)
}

// AnswerAs is Answer by who (a collaborator at least): `_gateway/permission_resolved` names them (actor)
// and an audit line records it.
func (s *Session) AnswerAs(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, error) {
	o, _, err := s.AnswerInTurnAs(who, permissionID, a, by)
	return o, err
}

// AnswerInTurnAs is AnswerInTurn by who (a collaborator at least).
func (s *Session) AnswerInTurnAs(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error) {
	return s.run.answer(who, permissionID, a, by)
}

// CancelAs is Cancel by who (a collaborator at least), audited.
func (s *Session) CancelAs(ctx context.Context, who principal.Principal) (string, error) {
	return s.run.cancel(ctx, who)
}

// CloseAs is Close by who (the owner or an admin), audited.
func (s *Session) CloseAs(who principal.Principal, reason string) error {
	return s.run.close(who, reason)
}

// SetModeAs is SetMode by who (the owner or an admin), audited.
func (s *Session) SetModeAs(ctx context.Context, who principal.Principal, modeID string) error {
	return s.run.setMode(ctx, who, modeID)
}

// SetConfigOptionAs is SetConfigOption by who (the owner or an admin), audited.
func (s *Session) SetConfigOptionAs(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error) {
	return s.run.setConfig(ctx, who, configID, value)
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

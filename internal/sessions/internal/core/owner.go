package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// VisibleTo reports whether p may see s: admins see every session, users their own and those shared with
// them (share.go). Every face asks through GetAs and ListAs, so a session p may not see answers exactly as
// one that does not exist.
func (s *Session) VisibleTo(p principal.Principal) bool {
	return s.AccessOf(p) >= access.View
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
func (s *Session) AnswerInTurnAs(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *turns.Turn, error) {
	return s.run.Answer(who, permissionID, a, by)
}

// CancelAs is Cancel by who (a collaborator at least), audited.
func (s *Session) CancelAs(ctx context.Context, who principal.Principal) (string, error) {
	return s.run.Cancel(ctx, who)
}

// CloseAs is Close by who (the owner or an admin), audited.
func (s *Session) CloseAs(who principal.Principal, reason string) error {
	return s.run.Close(who, reason)
}

// SetModeAs is SetMode by who (the owner or an admin), audited.
func (s *Session) SetModeAs(ctx context.Context, who principal.Principal, modeID string) error {
	return s.run.SetMode(ctx, who, modeID)
}

// SetConfigOptionAs is SetConfigOption by who (the owner or an admin), audited.
func (s *Session) SetConfigOptionAs(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error) {
	return s.run.SetConfig(ctx, who, configID, value)
}

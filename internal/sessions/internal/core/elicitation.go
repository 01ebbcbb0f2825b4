package core

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// RequestElicitation implements agents.ElicitationHandler. An `elicitation/create` is put to users exactly
// as a permission request is (askLocked): logged, answered by the first valid answer from any face, declined
// by the gateway on cancel, close, deadline and agent exit. A request it cannot put to a user safely is
// declined at once.
func (s *Session) RequestElicitation(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	req, perr := ask.ParseElicitationRequest(params)
	s.mu.Lock()
	p := s.newRequestLocked()
	p.Elicit = &req
	clientParams, err := s.tctx.PermissionParams(agentlogin.ScrubParams(params, s.agent.Secrets)) // the session id rewritten, the rest as sent
	if err != nil || perr != nil {
		s.mu.Unlock()
		s.logger.Warn("declining malformed elicitation request", "err", errors.Join(err, perr))
		return req.Decline("malformed elicitation request").MarshalResult(), nil
	}
	return s.askLocked(ctx, p, clientParams)
}

// CompleteElicitation implements agents.ElicitationHandler: the agent's `elicitation/complete` (a url-mode
// interaction finished) is logged for clients with the session id rewritten. Runs on the SDK's reader: it
// only appends.
func (s *Session) CompleteElicitation(params json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.tctx.PermissionParams(params)
	if err != nil {
		s.logger.Warn("dropping malformed elicitation/complete", "err", err)
		return
	}
	meta := translate.GatewayMeta{}
	if s.state.Turn != nil {
		meta.TurnID = s.state.Turn.ID
	}
	s.appendLocked(eventlog.KindElicitationComplete, "elicitation/complete", b, meta)
}

// PendingElicitations lists the pending elicitations in the order they were made.
func (s *Session) PendingElicitations() []pending.ElicitationView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Perms.ElicitationViews()
}

// ElicitationMode is the mode ("form" or "url") of a pending elicitation, "" when id is not one. The `/acp`
// face forwards an elicitation only to a client that advertised its mode.
func (s *Session) ElicitationMode(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Perms.ElicitationMode(id)
}

package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/store"
)

// This file holds the few session methods the raw-ACP face (`/acp`, package acpws) needs beyond what the
// REST and `/v1/sessions/{id}/ws` faces use.

// Authenticate forwards an ACP `authenticate` request (params as the client sent them) to the session's
// agent process and returns the agent's raw result. It is bounded by Config.CallTimeout. The agent's own
// JSON-RPC error comes back as an *acp.RequestError (inside an *AgentError), so a face can pass its code on.
func (s *Session) Authenticate(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return s.run.Authenticate(ctx, params)
}

// AgentAuthMethods returns the `authMethods` the session's agent answered to initialize (nil when unknown).
func (s *Session) AgentAuthMethods() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Status == store.StatusStarting {
		return nil
	}
	return agentlink.NullToNil(s.agent.AuthMethods)
}

package sessions

import (
	"log/slog"

	"github.com/acp-gateway/gateway/internal/agents"
)

// sessionLogger is the session's logger (its id and agent attached); static after construction.
func (s *Session) sessionLogger() *slog.Logger { return s.logger }

// agentSpec is the agent the session runs, as made for its owner; static after construction.
func (s *Session) agentSpec() agents.Spec { return s.spec }

// forkSource is the agent session a fork's agent forks, "" for a session that is no fork; static after
// construction.
func (s *Session) forkSource() string { return s.forkOf }

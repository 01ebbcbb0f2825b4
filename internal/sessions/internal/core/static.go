package core

import (
	"log/slog"

	"github.com/acp-gateway/gateway/internal/agents"
)

// The parts of a session fixed when it is made, for the role code around the core.

// sessionLogger is the session's logger (its id and agent attached); static after construction.
func (s *Session) sessionLogger() *slog.Logger { return s.logger }

// agentSpec is the agent the session runs, as made for its owner; static after construction.
func (s *Session) agentSpec() agents.Spec { return s.spec }

// setRunner makes r where the session's actions run. The host calls it once, before the session is shared.
func (s *Session) setRunner(r Runner) { s.run = r }

// runner is where the session's actions run, and the role state with them. Read without mu: the host sets
// it before the session is shared, and it never changes after.
func (s *Session) runner() Runner { return s.run }

// sessionHost is the host that holds the session; static after construction.
func (s *Session) sessionHost() Host { return s.host }

// forkFrom makes the session a fork of the agent session agentSID: its agent forks that one at start. Called
// before the session is shared.
func (s *Session) forkFrom(agentSID string) { s.forkOf = agentSID }

// forkSource is the agent session a fork's agent forks, "" for a session that is no fork; static after
// construction.
func (s *Session) forkSource() string { return s.forkOf }

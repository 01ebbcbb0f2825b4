package core

import (
	"log/slog"

	"github.com/acp-gateway/gateway/internal/agents"
)

// The parts of a session fixed when it is made, for the role code around the core.

// SessionLogger is the session's logger (its id and agent attached); static after construction.
func (c Control) SessionLogger() *slog.Logger { return c.s.logger }

// AgentSpec is the agent the session runs, as made for its owner; static after construction.
func (c Control) AgentSpec() agents.Spec { return c.s.spec }

// SetRunner makes r where the session's actions run. The host calls it once, before the session is shared.
func (c Control) SetRunner(r Runner) { c.s.run = r }

// Runner is where the session's actions run, and the role state with them. Read without mu: the host sets
// it before the session is shared, and it never changes after.
func (c Control) Runner() Runner { return c.s.run }

// SessionHost is the host that holds the session; static after construction.
func (c Control) SessionHost() Host { return c.s.host }

// ForkFrom makes the session a fork of the agent session agentSID: its agent forks that one at start. Called
// before the session is shared.
func (c Control) ForkFrom(agentSID string) { c.s.forkOf = agentSID }

// ForkSource is the agent session a fork's agent forks, "" for a session that is no fork; static after
// construction.
func (c Control) ForkSource() string { return c.s.forkOf }

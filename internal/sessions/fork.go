package sessions

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
)

// Forking a session (ACP session/fork): a new gateway session, with an agent process of its own like every
// session, whose agent is asked to fork the source's agent session instead of opening a new one. Its log
// starts with the source's transcript up to the fork (the same updates a session/load replays), so every
// face shows the history; from then on the two sessions are independent.

// ForkOptions are a client's choices for a fork; what they leave out comes from the source.
type ForkOptions struct {
	Cwd string // "" = the source's; else absolute, confined by the workspace roots
	// AdditionalDirs nil = the source's; an empty slice = none.
	AdditionalDirs []string
	// MCPServers are the forker's own; the source's client servers are not carried over (they may hold
	// its owner's secrets).
	MCPServers []agents.MCPServer
}

// forkPoint is what a fork takes from its source: the agent session to fork and the transcript so far.
type forkPoint struct {
	agentSID string
	history  [][]byte // session/update params, as Replay gives them
}

// ForkAs forks src for who, who must be allowed to act on it (a viewer observes only), and returns the new
// session, owned by who. A turn running in src is ErrTurnRunning: the agent's copy of a turn in progress
// would not match the transcript the fork starts with.
func (r *Registry) ForkAs(ctx context.Context, who principal.Principal, src *Session, opts ForkOptions) (*Session, error) {
	if err := core.ControlOf(src).Allow(who, AccessAct); err != nil {
		return nil, err
	}
	if f := follow.Of(src); f != nil {
		if err := f.Ended(); err != nil {
			return nil, err
		}
		return r.forkRemote(ctx, who, src, opts)
	}
	point, err := localOf(src).forkPoint(r.agentCaps(ctx, src))
	if err != nil {
		return nil, err
	}
	if opts.Cwd == "" {
		opts.Cwd = src.Cwd
	}
	if opts.AdditionalDirs == nil {
		opts.AdditionalDirs = src.AdditionalDirs
	}
	s, err := r.Create(ctx, CreateOptions{
		Agent: src.Agent, Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs, PermissionPolicy: src.Policy,
		Owner: who, MCPServers: opts.MCPServers, fork: point,
	})
	if err == nil {
		core.ControlOf(src).Audit(who, "fork", "into", s.ID)
	}
	return s, err
}

// agentCaps are the agentCapabilities s's agent answered at its last start here, else those of a probe of
// the agent (a session restored from the store has not started its agent in this process).
func (r *Registry) agentCaps(ctx context.Context, s *Session) json.RawMessage {
	if caps := core.ControlOf(s).AgentCapabilities(); len(agentlink.NullToNil(caps)) > 0 {
		return caps
	}
	if ai, ok := r.AgentInit(ctx, s.Agent); ok {
		return ai.Capabilities
	}
	return nil
}

// forkPoint checks the session, a fork's source, can be forked now (its agent's capabilities are caps) and
// takes the point to fork at, under one lock so no turn starts between the check and the transcript.
func (r *localRunner) forkPoint(caps json.RawMessage) (*forkPoint, error) {
	s := r.s
	c := core.ControlOf(s)
	c.Lock()
	defer c.Unlock()
	if err := c.ForkableLocked(); err != nil {
		return nil, err
	}
	if !canFork(caps) {
		return nil, fmt.Errorf("%w: agent %q does not advertise sessionCapabilities.fork", sessionerr.ErrForkUnsupported, s.Agent)
	}
	return &forkPoint{agentSID: c.AgentSession(), history: c.ReplayLocked()}, nil
}

// canFork reads sessionCapabilities.fork (an object when supported) from an agent's agentCapabilities.
func canFork(caps json.RawMessage) bool {
	var c struct {
		Session struct {
			Fork json.RawMessage `json:"fork"`
		} `json:"sessionCapabilities"`
	}
	return json.Unmarshal(caps, &c) == nil && len(agentlink.NullToNil(c.Session.Fork)) > 0
}

// logHistory logs a fork's inherited transcript as the first frames of its log (Control.LogInherited).
func (r *localRunner) logHistory(history [][]byte) { core.ControlOf(r.s).LogInherited(history) }

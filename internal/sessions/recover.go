package sessions

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// Start-up in a store mode (docs/cluster.md §4): every stored session of this node comes back detached and
// cold (only its directory entry in memory, listed from it); its first use hydrates it from the log.

// Recover makes every stored session of this node (or of none) a cold session: detached, or failed as it
// ended. Entries of closed sessions (a removal cut short) are removed. In mode c, sessions the other nodes
// failed with reason node_lost while this node was gone come back detached ("node returned"), and so do those
// they were still taking over when this node came back (package takeover). Call it before serving. It reports how
// many sessions it restored.
func (r *Registry) Recover(ctx context.Context) (int, error) {
	st := r.cfg.Store
	if st == nil {
		return 0, nil
	}
	entries, revs, err := r.takeover.ListDir(ctx)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	}
	n := 0
	for i, e := range entries {
		if e.Owner != "" && e.Owner != r.cfg.NodeID {
			continue
		}
		e, rev, ok := r.takeover.Settle(ctx, e, revs[i])
		if !ok {
			continue
		}
		s, err := r.coldSession(e, rev)
		if err != nil {
			r.cfg.Logger.Warn("stored session not restored", "session", e.ID, "err", err)
			continue
		}
		r.mu.Lock()
		r.sessions[s.ID] = s
		r.detached[s.ID] = struct{}{}
		r.mu.Unlock()
		go durableOf(s).RunWriter()
		n++
	}
	return n, nil
}

// coldSession builds the session an entry describes, without its log.
func (r *Registry) coldSession(e store.DirEntry, rev uint64) (*Session, error) {
	return r.coldSessionOf(e, rev, false)
}

// coldSessionOf is coldSession, for a follower when follower is set.
func (r *Registry) coldSessionOf(e store.DirEntry, rev uint64, follower bool) (*Session, error) {
	spec, ok := r.agents[e.Agent]
	if !ok {
		spec = agents.Spec{Name: e.Agent} // no longer configured: readable, a re-attach fails to start it
	}
	var mcp []agents.MCPServer
	if len(e.ClientMCP) > 0 {
		var err error
		if mcp, err = agents.ParseMCPServers(e.ClientMCP); err != nil {
			return nil, fmt.Errorf("client MCP servers: %w", err)
		}
	}
	var owner principal.Principal
	if e.Principal != nil {
		owner = *e.Principal
	}
	var dv DirView
	if len(e.View) > 0 {
		if err := json.Unmarshal(e.View, &dv); err != nil {
			return nil, fmt.Errorf("view: %w", err)
		}
	}
	s := newSession(r, e.ID, spec, CreateOptions{Cwd: e.Cwd, AdditionalDirs: e.AdditionalDirs, PermissionPolicy: e.Policy, Owner: owner, MCPServers: mcp, follower: follower, restored: true})
	core.ControlOf(s).ColdFromEntry(e, dv, rev)
	if !follower { // a follower never writes the store
		localOf(s).dur = r.newLink(s, rev)
	}
	return s, nil
}

// stoppedLocked is ErrShuttingDown (503 shutting_down) or ErrClosed when a shutdown of r or a close of s has
// begun. The caller holds s.mu.
func (r *Registry) stoppedLocked(s *Session) error {
	switch {
	case r.stopping.Err() != nil:
		return sessionerr.ErrShuttingDown
	case core.ControlOf(s).ClosingLocked():
		return sessionerr.ErrClosed
	}
	return nil
}

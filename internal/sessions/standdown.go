package sessions

import (
	"context"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/takeover"
	"github.com/acp-gateway/gateway/internal/store"
)

// ReasonNodeLost is the status reason of a session whose node was lost (and permission_resolved.by of its
// denials).
const ReasonNodeLost = takeover.ReasonNodeLost

// standDown ends this node's copy of a session another node took over while this one was cut off: the store
// is no longer its to write, so the write-behind and the directory writer stop first; then the agent is
// stopped (its turn ends, its requests are denied by node_lost) and the session fails node_lost here. Its
// streams end with ErrStoodDown and the registry serves it from the stored log again (a cold session of the
// current entry), where clients that reconnect find the takeover's frames. Nothing of it is written to the
// store. Once only; a session Close got to first is left alone.
func (r *localRunner) standDown() {
	s := r.s
	c := core.ControlOf(s)
	c.EndOnce(func() {
		conn, t := c.MarkStoodDown() // its agent's exit is expected; no Close will remove it from the store
		if d := r.dur; d != nil {
			d.StandDown()
		}
		pending.Deliver(c.DenyPending("", ReasonNodeLost, takeover.NodeLostText))
		if conn != nil {
			conn.Stop() // the turn's prompt call returns: its goroutine ends the turn
			r.reg.cfg.Metrics.AgentExited(s.Agent, true)
		}
		if t != nil {
			<-t.Done()
		}
		c.FailStoodDown(ReasonNodeLost)
		c.SessionLogger().Warn("session stood down: another node took it over while this node was cut off")
		r.reg.replaceStoodDown(s)
	})
}

// replaceStoodDown lists, in place of a stood-down session, the session its current entry describes (cold,
// hydrated from the stored log on first use), as Recover would; without an entry of this node it is dropped.
func (r *Registry) replaceStoodDown(s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), durable.DirWriteTimeout)
	defer cancel()
	var cold *Session
	e, rev, err := r.cfg.Store.Dir().Get(ctx, s.ID)
	if err == nil && e.Owner == r.cfg.NodeID && e.Status != store.StatusClosed {
		cold, err = r.coldSession(e, rev)
	}
	if err != nil {
		core.ControlOf(s).SessionLogger().Warn("stood-down session not listed again", "err", err)
	}
	r.mu.Lock()
	if r.sessions[s.ID] != s {
		r.mu.Unlock()
		if cold != nil {
			core.ControlOf(cold).CloseRoot()
		}
		return
	}
	if cold == nil || r.closing {
		delete(r.sessions, s.ID)
		delete(r.detached, s.ID)
		r.mu.Unlock()
		if cold != nil {
			core.ControlOf(cold).CloseRoot()
		}
		return
	}
	r.sessions[s.ID] = cold
	r.detached[s.ID] = struct{}{}
	r.mu.Unlock()
	go durableOf(cold).RunWriter()
}

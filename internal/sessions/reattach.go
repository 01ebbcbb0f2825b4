package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	acp "github.com/coder/acp-go-sdk"
)

// Detach and re-attach (docs/cluster.md §4): a detached session has no agent process but keeps its log,
// snapshot and place in the registry, so every face still serves its transcript. The next prompt starts the
// agent again and asks it to load (or resume) its own session, then runs the turn; seq goes on in the same
// epoch. Concurrent prompts while one re-attaches get ErrTurnRunning: the re-attaching prompt is the turn.

// resumeCapabilities reads what an agent's agentCapabilities say about taking a session back: loadSession,
// and sessionCapabilities.resume (an object when supported).
func resumeCapabilities(caps json.RawMessage) (canLoad, canResume bool) {
	var c struct {
		LoadSession         bool `json:"loadSession"`
		SessionCapabilities struct {
			Resume json.RawMessage `json:"resume"`
		} `json:"sessionCapabilities"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false, false
	}
	return c.LoadSession, agentlink.NullToNil(c.SessionCapabilities.Resume) != nil
}

// detach stops the agent but keeps the session: a running turn is cancelled as Close does (session/cancel,
// StopGrace, then the process tree is stopped), pending permissions are denied, and clients see
// `_gateway/session_status {status: detached, reason}` after the turn's end. It reports whether the session
// was detached (false: it was not attached, or Close or another detach got there first).
func (r *localRunner) detach(reason string) bool {
	s := r.s
	c := core.ControlOf(s)
	conn, t, answers, done, ok := c.BeginDetach()
	if !ok {
		return false
	}
	defer close(done)
	pending.Deliver(answers)
	if t != nil {
		_ = conn.Notify(context.Background(), acp.AgentMethodSessionCancel, map[string]any{"sessionId": c.AgentSession()})
		// Wait a little for the agent's own answer to the cancel before stopping it.
		w := time.NewTimer(r.reg.cfg.StopGrace)
		select {
		case <-t.Done():
		case <-w.C:
		}
		w.Stop()
	}
	conn.Stop()
	conn.DrainUpdates() // what the agent said before it stopped belongs before the status frame
	if t != nil {
		<-t.Done()
	}
	c.KillTerminals() // the agent that used them is gone
	if !c.EndDetach(reason) {
		return false
	}
	r.reg.markDetached(s.ID, true)
	r.reg.cfg.Metrics.AgentExited(s.Agent, false)
	c.SessionLogger().Info("session detached", "reason", reason)
	return true
}

// reattachAndPrompt re-attaches the detached session and starts the turn. The caller holds mu, which it
// releases. The session is `starting` meanwhile; on any failure, and when ctx (the prompting client) ends
// first, it is detached again, its agent stopped and its log untouched.
func (r *localRunner) reattachAndPrompt(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string, key promptkey.Key) (*Turn, error) {
	s := r.s
	c := core.ControlOf(s)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.BeginReattachLocked(cancel)
	c.Unlock()
	var lr loaded
	err := r.reg.claimAttach(s)
	if err == nil {
		lr, err = r.reattach(ctx)
		r.reg.starting.Done()
	}
	if h := r.reg.beforeAttach; h != nil {
		h(s)
	}
	c.Lock()
	closing := c.EndReattachLocked()
	if closing {
		err = sessionerr.ErrClosed // Close cut the re-attach short, or found no agent to stop
	}
	if err == nil {
		// Decided under mu, where Close and Shutdown's detach look at the status: Close found no agent to
		// stop, and a detach saw the session starting and left it alone, so nothing else stops this agent.
		switch {
		case r.reg.stopping.Err() != nil:
			err = sessionerr.ErrShuttingDown
		case ctx.Err() != nil:
			err = context.Cause(ctx) // nobody waits for this turn any more
		}
	}
	if err != nil {
		if !closing {
			c.RedetachLocked()
			r.reg.noteRefusalLocked(s, err)
		}
		c.Unlock()
		if lr.conn != nil {
			lr.conn.Stop()
		}
		r.reg.markDetached(s.ID, true)
		return nil, err
	}
	c.AttachLoadedLocked(lr.conn, lr.modes, lr.configOptions)
	// Still starting, under mu until the turn_started frame beginTurnLocked logs makes it running: a copy
	// folds the same frames, and the re-attach logs nothing when it fails.
	go r.watchAgent(lr.conn)
	c.NoteDir()
	c.SessionLogger().Info("session re-attached", "agentSession", c.AgentSession(), "method", lr.method)
	return c.BeginTurnLocked(ctx, who, blocks, turnID, key), nil // unlocks mu
}

// loaded is an agent that took its session back, not yet the session's.
type loaded struct {
	conn                 *agents.Conn
	method               string
	modes, configOptions json.RawMessage
}

// reattach starts the agent and has it load (or resume) the session it had. The agent's replay of the
// conversation, every session/update it sends before its answer, is dropped (the log has it); what it sends
// after the answer is live. A shutdown or the end of ctx cuts it short.
func (r *localRunner) reattach(ctx context.Context) (loaded, error) {
	s := r.s
	cfg := r.reg.cfg
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.reg.stopping, cancel)()
	if err := r.reg.recheck(s); err != nil {
		return loaded{}, err
	}
	conn, fail, err := r.launchAgent(ctx)
	if err != nil {
		return loaded{}, r.reattachError(ctx, err)
	}
	canLoad, canResume, sid := core.ControlOf(s).ResumeInfo()
	method := acp.AgentMethodSessionLoad
	switch {
	case canLoad:
	case canResume:
		method = acp.AgentMethodSessionResume
	default:
		conn.Stop()
		return loaded{}, sessionerr.ErrNotResumable
	}
	lctx, cancelLoad := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancelLoad()
	params := r.sessionParams()
	params["sessionId"] = sid
	res, err := r.openAgentSession(lctx, conn, method, params, true, nil)
	if err != nil {
		return loaded{}, r.reattachError(ctx, core.ControlOf(s).LoginRequired(err, fail(method, agentlink.CallError(lctx, err, cfg.StartTimeout))))
	}
	var lr struct {
		Modes         json.RawMessage `json:"modes"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	if err := json.Unmarshal(res, &lr); err != nil {
		return loaded{}, r.reattachError(ctx, fail(method, fmt.Errorf("malformed response: %w", err)))
	}
	return loaded{conn: conn, method: method, modes: agentlink.NullToNil(lr.Modes), configOptions: agentlink.NullToNil(lr.ConfigOptions)}, nil
}

// reattachError is a failed re-attach as callers see it: cut short by a shutdown, it is ErrShuttingDown; by
// the prompting client going away, ctx's cause.
func (r *localRunner) reattachError(ctx context.Context, err error) error {
	s := r.s
	if r.reg.stopping.Err() != nil {
		return sessionerr.ErrShuttingDown
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ae *sessionerr.AgentError
	if errors.As(err, &ae) {
		core.ControlOf(s).SessionLogger().Warn("agent failed to re-attach", "err", err, "stderr", tail(ae.Stderr, 4096))
	}
	return err
}

// Detach detaches a session now, as the idle reaper does with Config.DetachIdle: its agent is stopped, its
// transcript stays served, and the next prompt re-attaches it. ErrNotReady when the session has no running
// agent to stop (starting, detached, or ended).
func (r *Registry) Detach(id, reason string) error {
	s, err := r.Get(id)
	if err != nil {
		return err
	}
	if follow.Of(s) != nil { // a follower: its agent runs on the owner
		return sessionerr.ErrNotReady
	}
	if !localOf(s).detach(reason) {
		return sessionerr.ErrNotReady
	}
	return nil
}

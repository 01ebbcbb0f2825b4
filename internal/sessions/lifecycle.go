package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/agentprobe"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/admit"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	acp "github.com/coder/acp-go-sdk"
)

// A session's life: start (agent, initialize, authenticate, session/new), failure when the agent goes
// away, and Close.

// start launches the agent and opens the ACP session.
func (r *localRunner) start(ctx context.Context) error {
	s := r.s
	c := core.ControlOf(s)
	cfg := r.reg.cfg
	conn, fail, err := r.launchAgent(ctx)
	if err != nil {
		return err
	}
	method, params := acp.AgentMethodSessionNew, r.sessionParams()
	if forkOf := c.ForkSource(); forkOf != "" {
		// A fork asks its agent to fork the source's agent session (fork.go).
		if !canFork(c.AgentCapabilities()) {
			conn.Stop()
			return fmt.Errorf("%w: agent %q no longer advertises sessionCapabilities.fork", sessionerr.ErrForkUnsupported, s.Agent)
		}
		method, params["sessionId"] = acp.AgentMethodSessionFork, forkOf
	}
	nctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	gate := c.NewReadyGate()
	defer gate.Release()
	newRes, err := r.openAgentSession(nctx, conn, method, params, false, gate.Watch)
	if err != nil {
		return c.LoginRequired(err, fail(method, agentlink.CallError(nctx, err, cfg.StartTimeout)))
	}
	var nr struct {
		SessionID     string          `json:"sessionId"`
		Modes         json.RawMessage `json:"modes"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	if err := json.Unmarshal(newRes, &nr); err != nil || nr.SessionID == "" {
		gate.Release() // the agent's updates go on while it is stopped
		return fail(method, errors.New("malformed response: no sessionId"))
	}
	if h := r.reg.beforeAttach; h != nil {
		h(s)
	}
	attached, ready := c.AttachAgent(conn, nr.SessionID, agentlink.NullToNil(nr.Modes), agentlink.NullToNil(nr.ConfigOptions), r.reg.stopping)
	if !attached {
		// Closed, or a shutdown began, while starting: Close found no agent to stop, and a shutdown's detach
		// saw the session starting and left it alone, so stop it here.
		gate.Release()
		conn.Stop()
		return sessionerr.ErrClosed
	}
	gate.Release()
	if !ready { // session_ready wrote the directory entry too: one write, as before the frame
		c.NoteDir()
	}
	go r.watchAgent(conn)
	c.SessionLogger().Info("session started", "cwd", s.Cwd, "agentSession", nr.SessionID)
	return nil
}

// launchAgent starts the agent process, sends initialize and the configured authenticate, and records the
// agent's initialize answer and what it can resume. Session starts and re-attaches share it. fail stops the
// agent and describes a failed step.
func (r *localRunner) launchAgent(ctx context.Context) (*agents.Conn, func(op string, err error) error, error) {
	s := r.s
	c := core.ControlOf(s)
	cfg := r.reg.cfg
	spec := c.AgentSpec()
	if err := spec.MakeHome(); err != nil {
		return nil, nil, &sessionerr.AgentError{Op: "start agent", Err: fmt.Errorf("per-principal home: %w", err)}
	}
	loginEnv := r.reg.logins.Env(spec, s.Owner)
	c.SetLoginSecrets(agentlogin.SecretsOf(loginEnv))
	conn, err := agents.Start(spec, agents.Options{
		Cwd: s.Cwd, Env: cfg.AgentEnv, Handler: s, Logger: c.SessionLogger(), StopGrace: cfg.StopGrace,
		WriteTimeout: cfg.AgentWriteTimeout, Secrets: c.AgentSecrets(), Confiner: cfg.Confiner,
		ExtraDirs: s.AdditionalDirs, LoginEnv: loginEnv,
	})
	if err != nil {
		return nil, nil, r.scrubMCPSecrets(&sessionerr.AgentError{Op: "start agent", Err: err})
	}
	cfg.Metrics.AgentStarted(s.Agent)
	fail := func(op string, err error) error {
		// An agent that died answers nothing: its exit status and stderr say why, not the SDK's -32603.
		if exited := agenterr.Exited(conn, cfg.StopGrace); exited != nil {
			err = exited
		}
		conn.Stop()
		return r.scrubMCPSecrets(&sessionerr.AgentError{Op: op, Err: err, Stderr: conn.Stderr()})
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	ai, err := agentprobe.Initialize(ictx, conn, cfg.Version)
	if err != nil {
		return nil, nil, fail("initialize", agentlink.CallError(ictx, err, cfg.StartTimeout))
	}
	canLoad, canResume := resumeCapabilities(ai.Capabilities)
	c.NoteInitialize(ai.Info, ai.Capabilities, ai.AuthMethods, canLoad, canResume)
	// Every start refreshes what faces report about the agent, recorded for the configured spec: a session's
	// own (a HOME per principal) would make the answer look stale and the next listing probe again.
	if base, ok := r.reg.agents[s.Agent]; ok {
		r.reg.probes.Record(base, ai)
	}
	if err := admit.CheckMCPTransports(ai.Capabilities, c.ClientMCPServers()); err != nil {
		conn.Stop()
		return nil, nil, err
	}
	if err := admit.CheckAdditionalDirs(ai.Capabilities, s.AdditionalDirs); err != nil {
		conn.Stop()
		return nil, nil, err
	}
	if m := spec.AuthMethod; m != "" {
		actx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
		_, err := conn.Call(actx, acp.AgentMethodAuthenticate, map[string]any{"methodId": m})
		if err != nil {
			err = agentlink.CallError(actx, err, cfg.StartTimeout)
			cancel()
			return nil, nil, fail("authenticate "+m, err)
		}
		cancel()
	}
	return conn, fail, nil
}

// watchAgent fails the session when its agent goes away while the session is open. An agent that a detach
// or Close stopped, or one a re-attach has since replaced, is no failure.
func (r *localRunner) watchAgent(conn *agents.Conn) {
	<-conn.Done()
	if !core.ControlOf(r.s).AgentIsCurrent(conn) {
		return
	}
	// Give the process a moment to be reaped so the reason carries its exit status.
	t := time.NewTimer(time.Second)
	select {
	case <-conn.Exited():
	case <-t.C:
	}
	t.Stop()
	reason := "agent connection closed"
	if conn.LineTooLong() {
		reason = "agent wrote a stdout line over 10 MiB (the ACP SDK's limit); the connection was closed"
	}
	select {
	case <-conn.Exited():
		switch err := conn.ExitErr(); {
		case conn.LineTooLong():
		case err != nil:
			reason = "agent exited: " + err.Error()
		default:
			reason = "agent exited"
		}
	default:
	}
	if f := conn.Failure(); f != "" {
		reason = f // the gateway ended the connection itself (an agent that stopped reading its stdin)
	}
	r.fail(conn, reason)
}

// fail marks the session failed: pending permissions are denied, clients are told, the agent is stopped. The
// running turn (if any) ends through its own goroutine when the agent call returns.
func (r *localRunner) fail(conn *agents.Conn, reason string) {
	s := r.s
	c := core.ControlOf(s)
	answers, ok := c.MarkAgentFailed(conn, reason)
	if !ok {
		return
	}
	pending.Deliver(answers)
	r.reg.cfg.Metrics.AgentExited(s.Agent, true)
	c.SessionLogger().Warn("session failed", "reason", reason, "stderr", tail(conn.Stderr(), 2048))
	go func() {
		conn.Stop()
		c.CloseTerminals() // the agent that used them is gone
	}()
}

// sessionParams are the params of session/new, session/load and session/resume: cwd, mcpServers and, when the
// session has some, additionalDirectories.
func (r *localRunner) sessionParams() map[string]any {
	s := r.s
	p := map[string]any{"cwd": s.Cwd, "mcpServers": core.ControlOf(s).McpServers()}
	if len(s.AdditionalDirs) > 0 {
		p["additionalDirectories"] = s.AdditionalDirs
	}
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

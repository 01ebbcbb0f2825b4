package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate"
	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// A turn (package turns) is started, run and ended here, under mu, which guards it.

// Prompt starts a turn. It returns at once; the turn runs on its own goroutine until the agent answers.
// One turn at a time: a second prompt while one runs gets ErrTurnRunning. A prompt to a detached session
// first re-attaches its agent (reattach.go) and returns once the turn has started.
func (s *Session) Prompt(blocks []json.RawMessage) (*turns.Turn, error) {
	return s.PromptAs(principal.Principal{}, blocks)
}

// PromptAs is Prompt by who (a collaborator at least): `_gateway/turn_started` names them (actor) and an
// audit line records it.
func (s *Session) PromptAs(who principal.Principal, blocks []json.RawMessage) (*turns.Turn, error) {
	return s.PromptContext(context.Background(), who, blocks, "")
}

// PromptContext is PromptAs for a face whose client may go away: when ctx ends while the prompt re-attaches
// the session, no turn starts (the session stays detached) and the error is ctx's cause. A turnID other than
// "" is the new turn's id, so a face can know the turn's frames as its own before they are logged without
// holding a lock across the re-attach.
func (s *Session) PromptContext(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string) (*turns.Turn, error) {
	t, _, err := s.PromptWith(ctx, who, blocks, PromptOptions{TurnID: turnID})
	return t, err
}

// PromptOptions is how a face starts a turn beyond its prompt.
type PromptOptions struct {
	// TurnID is the new turn's id ("" = a new uuid).
	TurnID string
	// IdempotencyKey ("" = none) makes the prompt safe to send again: while the session remembers the key
	// (turns.Keys), the same prompt with it is the turn it started, and replayed says so.
	IdempotencyKey string
}

// PromptWith is PromptContext with opts; replayed reports a keyed prompt that had already started its turn.
func (s *Session) PromptWith(ctx context.Context, who principal.Principal, blocks []json.RawMessage, opts PromptOptions) (t *turns.Turn, replayed bool, err error) {
	if err := turns.CheckPromptSize(blocks, s.cfg.MaxPromptBytes); err != nil {
		return nil, false, err
	}
	if opts.IdempotencyKey != "" {
		if err := sessionerr.CheckIdempotencyKey(opts.IdempotencyKey); err != nil {
			return nil, false, err
		}
	}
	if err := s.allow(who, access.Act); err != nil {
		return nil, false, err
	}
	key := promptkey.New(who, opts.IdempotencyKey, blocks)
	if key.Key != "" {
		s.mu.Lock()
		t, err = s.keyedTurnLocked(key) // a follower's copy knows the keys its owner logged
		s.mu.Unlock()
		if t != nil || err != nil {
			return t, t != nil, err
		}
	}
	return s.run.Prompt(ctx, who, blocks, opts, key)
}

// beginTurnLocked starts a turn by who (its id turnID, or a new one when "") on the idle session: the caller
// holds mu, which it releases. The turn's trace continues the one in ctx.
func (s *Session) beginTurnLocked(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string, key promptkey.Key) *turns.Turn {
	if turnID == "" {
		turnID = uuid.NewString()
	}
	t := turns.New(turnID, s.host.Now().UTC(), who, s.cfg.Tracer.StartTurn(ctx, s.Agent, s.ID, turnID))
	s.state.Turn, s.state.Latest = t, t // turn_started, logged below, makes the session running
	s.tctx.BeginTurn(t.ID)
	// startedAt and endedAt make the log enough to rebuild currentTurn and lastTurn (restore.go); the key's
	// digests, the prompts a retry must not run again.
	started := withActor(map[string]any{"turnId": t.ID, "startedAt": t.StartedAt.Format(time.RFC3339Nano)}, who)
	if key.Key != "" {
		started["idempotencyKey"] = key
		s.state.Keys.Add(key, t.ID)
	}
	s.appendGatewayLocked("_gateway/turn_started", t.ID, started)
	// The user's prompt is part of the transcript: log it as user_message_chunks of one message.
	for _, params := range s.tctx.UserPrompt(t.ID, blocks) {
		s.appendLocked(eventlog.KindUserChunk, "session/update", params, translate.GatewayMeta{TurnID: t.ID})
	}
	conn := s.agent.Conn
	s.mu.Unlock()
	s.cfg.Metrics.TurnStarted()
	s.logger.Info("turn started", "turn", t.ID, "promptChars", len(turns.TextOf(blocks)))
	s.audit(who, "prompt", "turn", t.ID)
	go s.runTurn(conn, t, blocks)
	return t
}

// runTurn owns the agent's `session/prompt` call (Turn.Prompt). Cancel is a `session/cancel` notification
// plus a grace timer; if the agent stays silent past it, the turn ends `cancelled` and the agent is killed.
func (s *Session) runTurn(conn *agents.Conn, t *turns.Turn, blocks []json.RawMessage) {
	answered := make(chan turns.Answer, 1)
	go func() {
		a := t.Prompt(conn, s.agent.SID, blocks)
		if a.UsageMalformed {
			s.logger.Warn("ignoring the malformed usage of a session/prompt answer", "turn", t.ID)
		}
		answered <- a
	}()
	cancelCh := t.Cancelled()
	var grace <-chan time.Time
	quietWatch := s.watchQuiet(conn, t) // quiet.go: says so when the agent sends nothing for a while
	defer quietWatch.Stop()
	for {
		select {
		case <-quietWatch.Due():
			quietWatch.Check()
		case o := <-answered:
			if o.Err != nil {
				conn.DrainUpdates()
			}
			s.mu.Lock()
			t.SetUsage(o.Usage)
			s.mu.Unlock()
			s.finishTurn(t, o.StopReason, o.Err, "")
			return
		case <-cancelCh:
			cancelCh = nil
			timer := time.NewTimer(s.cfg.CancelGrace)
			defer timer.Stop()
			grace = timer.C
		case <-grace:
			// The turn ends and the session fails in one step: no prompt can slip in between.
			reason := fmt.Sprintf("agent did not answer session/cancel within %s; it was stopped", s.cfg.CancelGrace)
			if s.finishTurn(t, translate.StopCancelled, nil, reason) {
				s.cfg.Metrics.AgentExited(s.Agent, true)
				s.logger.Warn("session failed", "reason", reason)
			}
			conn.Kill()
			return
		}
	}
}

// finishTurn records how the turn ended, closes its open tool calls when it did not end normally, denies
// its pending permission requests and tells clients. Only the first call for a turn counts. With failReason,
// the session fails in the same step. It reports whether it failed the session.
func (s *Session) finishTurn(t *turns.Turn, agentStop string, callErr error, failReason string) bool {
	s.mu.Lock()
	if s.state.Turn != t {
		s.mu.Unlock()
		return false
	}
	end := turns.EndOf(t, agentStop, callErr, s.host.Now().UTC())
	stop := end.Stop
	for _, p := range s.tctx.EndTurn(end.CloseReason) {
		s.appendLocked(eventlog.KindUpdate, "session/update", p, translate.GatewayMeta{TurnID: t.ID})
	}
	answers := s.denyPendingLocked(t.ID, "turn_ended", "turn ended")
	s.state.LastTurn = end.Last
	s.appendGatewayLocked("_gateway/turn_ended", t.ID, end.Frame)
	s.state.Turn = nil
	s.lastActive = s.host.Now()
	failed := false
	switch {
	case failReason != "" && !s.closing && s.state.Status != store.StatusClosed && s.state.Status != store.StatusFailed:
		failed = true
		answers = append(answers, s.denyPendingLocked("", "agent_exit", "agent stopped")...)
		s.logStatusLocked(store.StatusFailed, failReason)
	}
	r := turns.TurnResult{TurnID: t.ID, StopReason: stop, Outcome: end.Outcome, Usage: t.Usage()}
	if end.Failed {
		r.Err = agentlogin.ScrubErr(agenterr.Clean(callErr), s.agent.Secrets) // REST details and `/acp` errors show it
	}
	r = t.End(r)
	s.state.Keys.Ended(r)
	t.Span().End(stop, r.Err)
	s.mu.Unlock()
	pending.Deliver(answers)
	s.cfg.Metrics.TurnEnded(stop, r.Err != nil)
	if u := r.Usage; u != nil {
		s.cfg.Metrics.TurnTokens(t.Payer(s.Owner.ID), s.Agent, u.Tokens())
	}
	s.logger.Info("turn ended", "turn", t.ID, "stopReason", stop, "err", callErr)
	return failed
}

// Cancel asks the agent to stop the running turn: pending permission requests are answered `cancelled` (as
// ACP requires after session/cancel), `session/cancel` is sent, and the turn goes on until the agent answers.
func (s *Session) Cancel(ctx context.Context) (string, error) {
	s.mu.Lock()
	t := s.state.Turn
	if t == nil {
		s.mu.Unlock()
		return "", sessionerr.ErrNoTurn
	}
	first := t.RequestCancel()
	answers := s.cancelPendingLocked(t.ID)
	conn := s.agent.Conn
	s.mu.Unlock()
	pending.Deliver(answers)
	if first {
		if err := conn.Notify(ctx, acp.AgentMethodSessionCancel, map[string]any{"sessionId": s.agent.SID}); err != nil {
			s.logger.Warn("send session/cancel", "err", err)
		}
		s.logger.Info("turn cancel requested", "turn", t.ID)
	}
	return t.ID, nil
}

// CurrentTurn returns the running turn, or nil.
func (s *Session) CurrentTurn() *turns.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Turn
}

// TurnByID is the running or latest turn if it has id.
func (c Control) TurnByID(id string) *turns.Turn {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turnByIDLocked(id)
}

func (s *Session) turnByIDLocked(id string) *turns.Turn {
	for _, t := range []*turns.Turn{s.state.Turn, s.state.Latest} {
		if t != nil && t.ID == id {
			return t
		}
	}
	return nil
}

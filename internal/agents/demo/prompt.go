package demo

import (
	"context"
	"errors"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents/inproc"
)

// errPermissionCancelled ends a turn whose permission request was answered
// with the "cancelled" outcome.
var errPermissionCancelled = errors.New("permission request cancelled")

// errTurnRunning refuses a second prompt on a busy session.
var errTurnRunning = acp.NewInvalidRequest(map[string]any{"error": "a turn is already running"})

// Prompt implements acp.Agent.
//
// The turn's context deliberately does not derive from the request context:
// acp-go-sdk cancels the request context of a session's running prompt when a
// second prompt for that session arrives, and the demo agent refuses the
// second prompt instead of giving up the first. The turn stops on
// session/cancel, a "cancelled" permission outcome, or shutdown.
func (a *agent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	if !a.work.Enter() {
		return acp.PromptResponse{}, errShuttingDown
	}
	defer a.work.Leave()

	ctx, cancel := context.WithCancel(a.base)
	defer cancel()
	text := inproc.PromptText(p.Prompt)
	kind, arg := classify(text)

	a.mu.Lock()
	s := a.sessions[p.SessionId]
	if s == nil {
		a.mu.Unlock()
		return acp.PromptResponse{}, inproc.UnknownSession(p.SessionId)
	}
	if s.cancelTurn != nil {
		a.mu.Unlock()
		return acp.PromptResponse{}, errTurnRunning
	}
	s.cancelTurn = cancel
	s.turns++
	if s.turns == 1 {
		s.firstPrompt = text
	}
	t := &turn{ctx: ctx, conn: a.conn, sid: s.id, delay: a.opts.Delay, n: s.turns, cwd: s.cwd, text: text}
	if kind == kindFull {
		s.used += 1000 + len(text)
		t.used = s.used
		if !s.titled {
			t.title = "Demo: " + headline(s.firstPrompt, 40)
		}
	}
	a.mu.Unlock()
	if s.announced != nil {
		select {
		case <-s.announced:
		case <-ctx.Done():
		}
	}

	var err error
	switch kind {
	case kindQuick:
		err = t.echo()
	case kindHelp:
		err = t.reply(helpText)
	case kindEcho:
		err = t.reply(arg)
	case kindAsk:
		err = t.ask()
	default:
		err = t.full()
	}

	a.mu.Lock()
	s.cancelTurn = nil
	s.titled = s.titled || t.titleSent
	a.mu.Unlock()

	switch {
	case ctx.Err() != nil || errors.Is(err, errPermissionCancelled):
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case err != nil:
		return acp.PromptResponse{}, err
	}
	res := acp.PromptResponse{StopReason: acp.StopReasonEndTurn}
	if kind == kindFull {
		in := 1000 + len(text) // what the context grew by, as usage_update says
		res.Usage = &acp.Usage{InputTokens: in, OutputTokens: demoOutputTokens, TotalTokens: in + demoOutputTokens}
	}
	return res, nil
}

// demoOutputTokens is the made-up output of a full turn, reported in its PromptResponse.usage.
const demoOutputTokens = 100

// promptKind selects the script a prompt runs; see the package comment.
type promptKind int

const (
	kindFull promptKind = iota
	kindQuick
	kindHelp
	kindEcho
	kindAsk
)

// classify picks the script for a prompt text and, for "/echo", the text to
// repeat.
func classify(text string) (promptKind, string) {
	command := strings.TrimSpace(text)
	switch {
	case command == "quick":
		return kindQuick, ""
	case command == "/help":
		return kindHelp, ""
	case command == "/ask":
		return kindAsk, ""
	case command == "/echo":
		return kindEcho, "(nothing to echo)"
	case strings.HasPrefix(command, "/echo ") || strings.HasPrefix(command, "/echo\n"):
		return kindEcho, strings.TrimSpace(command[len("/echo"):])
	}
	return kindFull, ""
}

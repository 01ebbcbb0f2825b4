package acpws

import (
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// TestFailedTurnIsAnError: an agent that dies mid-turn fails the turn, and `/acp`'s session/prompt answers it
// with a JSON-RPC error, never a PromptResponse whose end_turn would read as a turn that finished. ACP's stop
// reasons (end_turn, max_tokens, max_turn_requests, refusal, cancelled) all mean the agent ended the turn.
func TestFailedTurnIsAnError(t *testing.T) {
	exiter := agents.Spec{Name: "exiter", Kind: agents.KindACP, Command: testAgentBinary(t), Args: []string{"-mode", "exit"}}
	e := newEnvCfg(t, Options{}, sessions.Config{}, exiter)
	cl := e.dial("/acp/exiter")
	cl.initialize()
	sid := cl.newSession(e.dir)
	_, resp := cl.call("session/prompt", textPrompt(sid, "die"))
	if resp.Error == nil || resp.Error.Code != jsonrpc.Internal {
		t.Fatalf("session/prompt of a turn whose agent died: %s", resp.raw)
	}
	if strings.Contains(string(resp.raw), `"stopReason"`) {
		t.Fatalf("a failed turn answered with a stop reason: %s", resp.raw)
	}
}

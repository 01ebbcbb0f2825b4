package agentprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	acp "github.com/coder/acp-go-sdk"
)

// AgentInit is what an agent answered to the gateway's `initialize`, as the gateway last heard it (from a
// probe or from a session start). Faces report it so clients see the agent's real capabilities before any
// session exists.
type AgentInit struct {
	Info         json.RawMessage `json:"info,omitempty"`         // the agent's agentInfo
	Capabilities json.RawMessage `json:"capabilities,omitempty"` // the agent's agentCapabilities
	AuthMethods  json.RawMessage `json:"authMethods,omitempty"`  // the agent's authMethods
	ProbedAt     time.Time       `json:"probedAt"`               // when the answer arrived
}

// Initialize sends the gateway's `initialize` to a freshly started agent and checks the answer. Session
// starts and probes both use it, so an agent is always asked the same thing.
func Initialize(ctx context.Context, conn *agents.Conn, version string) (AgentInit, error) {
	// The gateway serves fs/* and terminal/* itself, confined to the session cwd (package agentsvc).
	// `_meta.terminal_output`: the UI renders a tool call's `_meta.terminal_output` as live terminal output
	// (docs/ui.md). `elicitation`: both modes are put to the session's users (sessions/elicitation.go). `auth.terminal`:
	// the gateway runs a terminal auth method's login command in a PTY for the browser (package termlogin).
	res, err := conn.Call(ctx, acp.AgentMethodInitialize, map[string]any{
		"protocolVersion": acp.ProtocolVersionNumber,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": true, "writeTextFile": true}, "terminal": true, "_meta": map[string]bool{"terminal_output": true},
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}, "auth": map[string]bool{"terminal": true}},
		"clientInfo": map[string]string{"name": "acp-gateway", "version": version},
	})
	if err != nil {
		return AgentInit{}, err
	}
	var ir struct {
		ProtocolVersion   int             `json:"protocolVersion"`
		AgentInfo         json.RawMessage `json:"agentInfo"`
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
		AuthMethods       json.RawMessage `json:"authMethods"`
	}
	if err := json.Unmarshal(res, &ir); err != nil {
		return AgentInit{}, fmt.Errorf("malformed response: %w", err)
	}
	if ir.ProtocolVersion != acp.ProtocolVersionNumber {
		return AgentInit{}, fmt.Errorf("agent speaks ACP protocol version %d, the gateway speaks %d", ir.ProtocolVersion, acp.ProtocolVersionNumber)
	}
	return AgentInit{
		Info: orNil(ir.AgentInfo), Capabilities: orNil(ir.AgentCapabilities), AuthMethods: orNil(ir.AuthMethods),
		ProbedAt: time.Now().UTC(),
	}, nil
}

// orNil is b, or nil when the agent sent nothing or null.
func orNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

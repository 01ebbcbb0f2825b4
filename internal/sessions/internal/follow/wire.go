package follow

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// What a routed command carries from the node that routes it (Runner) to the session's owner, which serves
// it (Serve).

// Command ops.
const (
	OpCreate       = "create"
	OpPrompt       = "prompt"
	OpCancel       = "cancel"
	OpAnswer       = "answer"
	OpSetMode      = "set_mode"
	OpSetConfig    = "set_config_option"
	OpClose        = "close"
	OpShare        = "share"
	OpUnshare      = "unshare"
	OpAuthenticate = "authenticate"
	OpAttachMCP    = "attach_mcp"
	OpFork         = "fork" // SID is the source; the owner forks it (the registry's fork.go)
	OpRename       = "rename"
	OpListFiles    = "list_files"
)

type PromptArgs struct {
	Blocks         []json.RawMessage `json:"blocks"`
	TurnID         string            `json:"turnId"`
	IdempotencyKey string            `json:"idempotencyKey,omitempty"`
}

type AnswerArgs struct {
	PermissionID string           `json:"permissionId"`
	Answer       ask.ClientAnswer `json:"answer"`
	By           string           `json:"by"`
}

type SetModeArgs struct {
	ModeID string `json:"modeId"`
}

type SetConfigArgs struct {
	ConfigID string          `json:"configId"`
	Value    json.RawMessage `json:"value"`
}

type CloseArgs struct {
	Reason string `json:"reason"`
	// Delete also removes the agent's own copy of the session (DeleteAs).
	Delete bool `json:"delete,omitempty"`
}

type ShareArgs struct {
	With string          `json:"with"`
	Role store.ShareRole `json:"role,omitempty"`
}

// ShareResult is the directory revision of the entry that holds a share change (0 = unknown).
type ShareResult struct {
	Rev uint64 `json:"rev,omitempty"`
}

type CreateArgs struct {
	Agent            string          `json:"agent,omitempty"`
	Cwd              string          `json:"cwd,omitempty"`
	AdditionalDirs   []string        `json:"additionalDirectories,omitempty"`
	PermissionPolicy string          `json:"permissionPolicy,omitempty"`
	MCPServers       json.RawMessage `json:"mcpServers,omitempty"`
}

type TurnResult struct {
	TurnID string `json:"turnId"`
	// Replayed says a keyed prompt named the turn its key had started (a prompt only).
	Replayed bool `json:"replayed,omitempty"`
}

type CreateResult struct {
	ID     string       `json:"id"`
	Status store.Status `json:"status"` // as the owner returned it: starting → idle is not in the log
	// ForkedAt is a fork's ForkedAt; 0 for a session that is no fork.
	ForkedAt uint64 `json:"forkedAt,omitempty"`
}

// ForkArgs are a routed fork's options (OpFork).
type ForkArgs struct {
	Cwd            string          `json:"cwd,omitempty"`
	AdditionalDirs []string        `json:"additionalDirectories"`
	MCPServers     json.RawMessage `json:"mcpServers,omitempty"`
}

// Package views holds a session as others see it, without its state: what REST clients get (View, Detail)
// and what the directory keeps beside the log (DirView, Resumability). The session core fills them in.
package views

import (
	"encoding/json"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/stream"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
)

// View is a session as REST clients see it.
type View struct {
	ID                 string                   `json:"id"`
	Title              string                   `json:"title,omitempty"`
	Agent              string                   `json:"agent"`
	Cwd                string                   `json:"cwd"`
	AdditionalDirs     []string                 `json:"additionalDirectories,omitempty"`
	Status             store.Status             `json:"status"`
	StatusReason       string                   `json:"statusReason,omitempty"`
	Epoch              string                   `json:"epoch"`
	LastSeq            uint64                   `json:"lastSeq"`
	CreatedAt          time.Time                `json:"createdAt"`
	PermissionPolicy   string                   `json:"permissionPolicy"`
	Clients            int                      `json:"clients"`
	Modes              json.RawMessage          `json:"modes,omitempty"`
	ConfigOptions      json.RawMessage          `json:"configOptions,omitempty"`
	AgentInfo          json.RawMessage          `json:"agentInfo,omitempty"`
	AgentCapabilities  json.RawMessage          `json:"agentCapabilities,omitempty"`
	CurrentTurn        *turns.TurnView          `json:"currentTurn"`
	LastTurn           *turns.LastTurnView      `json:"lastTurn,omitempty"`
	PendingPermissions []pending.PermissionView `json:"pendingPermissions"`
	// PendingElicitations are the agent's questions waiting for a user (never null).
	PendingElicitations []pending.ElicitationView `json:"pendingElicitations"`
	// DurableSeq is the seq up to which the store holds the log (store modes; omitted in memory mode).
	DurableSeq *uint64 `json:"durableSeq,omitempty"`
	// Node is the node that owns the session: runs its agent and writes its log (mode c only).
	Node string `json:"node,omitempty"`
}

// Detail is View plus the snapshot of the transcript; LastSeq and the snapshot's seq are the same point.
type Detail struct {
	View
	Watchers []stream.Watcher `json:"watchers"` // who streams the session now
	Snapshot json.RawMessage  `json:"snapshot,omitempty"`
}

// DirView is the part of a session's View its log does not carry, kept in the directory (DirEntry.View):
// modes and config options as the agent's session/new, set_mode and set_config_option answers left them, and
// what initialize said about the agent.
type DirView struct {
	Modes             json.RawMessage `json:"modes,omitempty"`
	ConfigOptions     json.RawMessage `json:"configOptions,omitempty"`
	AgentInfo         json.RawMessage `json:"agentInfo,omitempty"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities,omitempty"`
	// Title and LastTurn list a cold session (one not yet hydrated); a hydration takes them from the log.
	Title    string              `json:"title,omitempty"`
	LastTurn *turns.LastTurnView `json:"lastTurn,omitempty"`
}

// Resumability is what a store persists so a later process can re-attach the session (DirEntry).
type Resumability struct {
	AgentSessionID string
	CanLoad        bool
	CanResume      bool
}

package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// Runner is where a session's actions run. A session this node made or restored runs them here
// (localRunner, runner_local.go): the node owns it and its agent. A follower, this node's copy of another
// node's session, routes them to the owner (follow.Runner). The choice is made once, when the
// session is made; the public methods (PromptWith, CancelAs, …) check what is common and call the Runner.
type Runner interface {
	// Prompt starts a turn; the caller checked the prompt's size, its key and that who may prompt.
	Prompt(ctx context.Context, who principal.Principal, blocks []json.RawMessage, opts PromptOptions, key promptkey.Key) (*turns.Turn, bool, error)
	Cancel(ctx context.Context, who principal.Principal) (string, error)
	Answer(who principal.Principal, requestID string, a ask.ClientAnswer, by string) (ask.Outcome, *turns.Turn, error)
	SetMode(ctx context.Context, who principal.Principal, modeID string) error
	SetConfig(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error)
	// Share sets who's share of with to role ("" ends it); the caller checked who owns the session.
	Share(who principal.Principal, with string, role store.ShareRole) error
	AttachMCP(who principal.Principal, servers []agents.MCPServer) error
	Authenticate(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// Close closes the session for who; closeHere ends this node's session (a follower: only its copy).
	Close(who principal.Principal, reason string) error
	CloseHere(reason string)
	// Delete closes the session and deletes the agent's copy (deletion.go); the caller checked who may.
	Delete(ctx context.Context, who principal.Principal, reason string) (AgentDeletion, error)
	// Rename logs a title the caller checked (rename.go); ListFiles lists the cwd's files (services.go).
	Rename(ctx context.Context, who principal.Principal, title string) error
	ListFiles(ctx context.Context, who principal.Principal, opts services.FilesOptions) (agentsvc.ListResult, error)
	// DelegateFS offers d to serve the agent's fs/* and terminal/* until release.
	DelegateFS(who principal.Principal, d services.FSDelegate) (release func())

	// What a session shows, where it differs by where the session runs.

	// Hydrate loads a cold session on its first use (sessions/recover.go) and notes the use.
	Hydrate() error
	// CurrentEpoch is the epoch the session's log is in now; epochLocked is it with mu held.
	CurrentEpoch() string
	EpochLocked() string
	// AwaitResume waits (bounded) until the log holds the frames a client resuming after seq in epoch read
	// elsewhere: a copy may be a moment behind its owner.
	AwaitResume(after uint64, epoch string)
	// PlaceLocked sets what the view says of where the session is: its node and how much of it is stored.
	// The caller holds mu.
	PlaceLocked(v *views.View)
}

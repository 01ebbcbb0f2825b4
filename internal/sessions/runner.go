package sessions

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// runner is where a session's actions run. A session this node made or restored runs them here
// (localRunner, runner_local.go): the node owns it and its agent. A follower, this node's copy of another
// node's session, routes them to the owner (remoteRunner, route.go). The choice is made once, when the
// session is made; the public methods (PromptWith, CancelAs, …) check what is common and call the runner.
type runner interface {
	// prompt starts a turn; the caller checked the prompt's size, its key and that who may prompt.
	prompt(ctx context.Context, who principal.Principal, blocks []json.RawMessage, opts PromptOptions, key promptkey.Key) (*Turn, bool, error)
	cancel(ctx context.Context, who principal.Principal) (string, error)
	answer(who principal.Principal, requestID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error)
	setMode(ctx context.Context, who principal.Principal, modeID string) error
	setConfig(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error)
	// share sets who's share of with to role ("" ends it); the caller checked who owns the session.
	share(who principal.Principal, with string, role store.ShareRole) error
	attachMCP(who principal.Principal, servers []agents.MCPServer) error
	authenticate(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// close closes the session for who; closeHere ends this node's session (a follower: only its copy).
	close(who principal.Principal, reason string) error
	closeHere(reason string)
	// delete closes the session and deletes the agent's copy (deletion.go); the caller checked who may.
	delete(ctx context.Context, who principal.Principal, reason string) (AgentDeletion, error)
	// rename logs a title the caller checked (rename.go); listFiles lists the cwd's files (files.go).
	rename(ctx context.Context, who principal.Principal, title string) error
	listFiles(ctx context.Context, who principal.Principal, opts FilesOptions) (agentsvc.ListResult, error)
	// delegateFS offers d to serve the agent's fs/* and terminal/* until release.
	delegateFS(who principal.Principal, d FSDelegate) (release func())

	// What a session shows, where it differs by where the session runs.

	// hydrate loads a cold session on its first use (recover.go) and notes the use.
	hydrate() error
	// currentEpoch is the epoch the session's log is in now; epochLocked is it with mu held.
	currentEpoch() string
	epochLocked() string
	// awaitResume waits (bounded) until the log holds the frames a client resuming after seq in epoch read
	// elsewhere: a copy may be a moment behind its owner.
	awaitResume(after uint64, epoch string)
	// placeLocked sets what the view says of where the session is: its node and how much of it is stored.
	// The caller holds mu.
	placeLocked(v *View)
}

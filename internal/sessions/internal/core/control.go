package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// Control is what the role code (the local runner, the follower, the store link, the registry) does to a
// session beyond the API the faces use. Only the packages under internal/sessions can name it.
type Control struct{ s *Session }

// ControlOf is the role code's handle on s.
func ControlOf(s *Session) Control { return Control{s} }

// AddFSDelegate puts d, a connection of who, on top of the session's delegates (an earlier offer of d moves
// there), until the release it returns takes this offer back.
func (c Control) AddFSDelegate(who principal.Principal, d services.FSDelegate) (release func()) {
	return c.s.svc.AddFSDelegate(who, d)
}

// Allow checks who may take an action needing at least need. Nobody (the gateway's own code) always may.
func (c Control) Allow(who principal.Principal, need access.Access) error {
	return c.s.allow(who, need)
}

// Answer is Answer by who, also returning the running turn the request belonged to.
func (c Control) Answer(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *turns.Turn, error) {
	return c.s.answer(who, permissionID, a, by)
}

// Audit logs an audited action on s by who (nothing when nobody acted: the gateway's own code).
func (c Control) Audit(who principal.Principal, action string, attrs ...any) {
	c.s.audit(who, action, attrs...)
}

// BeginTurnLocked starts a turn by who (its id turnID, or a new one when "") on the idle session: the caller
// holds mu, which it releases. The turn's trace continues the one in ctx.
func (c Control) BeginTurnLocked(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string, key promptkey.Key) *turns.Turn {
	return c.s.beginTurnLocked(ctx, who, blocks, turnID, key)
}

// CloseRoot releases the cwd's descriptor; fs/* requests after it fail as "cwd gone".
func (c Control) CloseRoot() { c.s.closeRoot() }

// KeyedTurnLocked is the turn k already started, or nil when k is new. A known key with another prompt is
// ErrIdempotencyKeyReused. A turn no longer the session's running or latest one comes back ended, without
// its text. The caller holds mu.
func (c Control) KeyedTurnLocked(k promptkey.Key) (*turns.Turn, error) { return c.s.keyedTurnLocked(k) }

// LastEpochLocked is the chain's last link, or Epoch before the chain has one. The caller holds mu.
func (c Control) LastEpochLocked() string { return c.s.lastEpochLocked() }

// ListFilesHere lists the files of the session this node runs.
func (c Control) ListFilesHere(opts services.FilesOptions) (agentsvc.ListResult, error) {
	return c.s.svc.ListFiles(opts)
}

// McpServers is the `mcpServers` the gateway sends the agent on session/new, session/load and session/resume:
// the configured servers, then the client's. Never nil (ACP requires the array).
func (c Control) McpServers() []agents.MCPServer { return c.s.mcpServers() }

// NoteDir tells the host that the session's directory entry changed. It never blocks.
func (c Control) NoteDir() { c.s.noteDir() }

// SetShare sets with's share of the session to role; "" ends it. It takes only the shares' own lock.
func (c Control) SetShare(with string, role store.ShareRole) { c.s.shares.Set(with, role) }

// SharesChanged applies a change of the shares to open streams: the subscribers of a principal who may no
// longer see the session lose it (Lost), a delegate whose principal may no longer act gives back the fs/* and
// terminal/* requests it holds, and presence is published again (roles change).
func (c Control) SharesChanged() { c.s.sharesChanged() }

// StoodDownNow reports whether the session was stood down.
func (c Control) StoodDownNow() bool { return c.s.stoodDownNow() }

// TurnByIDLocked is TurnByID with mu held.
func (c Control) TurnByIDLocked(id string) *turns.Turn { return c.s.turnByIDLocked(id) }

// Usable reports whether the session can take requests for its agent, and returns the agent.
func (c Control) Usable() (*agents.Conn, error) { return c.s.usable() }

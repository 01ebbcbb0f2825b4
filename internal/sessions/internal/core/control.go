package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
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
func (c Control) AddFSDelegate(who principal.Principal, d FSDelegate) (release func()) {
	return c.s.svc.AddFSDelegate(who, d)
}

// AddedMCPServers are the MCP servers the client added to the session, read under mu (AttachMCP sets them).
func (c Control) AddedMCPServers() []agents.MCPServer { return c.s.addedMCPServers() }

// AgentCapabilities are the agentCapabilities the agent answered at its last start here, nil before one.
func (c Control) AgentCapabilities() json.RawMessage { return c.s.agentCapabilities() }

// AgentCapabilitiesLocked is agentCapabilities with mu held.
func (c Control) AgentCapabilitiesLocked() json.RawMessage { return c.s.agentCapabilitiesLocked() }

// AgentIsCurrent reports whether conn is the session's agent and its exit would be unexpected.
func (c Control) AgentIsCurrent(conn *agents.Conn) bool { return c.s.agentIsCurrent(conn) }

// AgentOpened is the agent's session id and capabilities, read together: what deleting its copy needs.
func (c Control) AgentOpened() (agentSID string, caps json.RawMessage) { return c.s.agentOpened() }

// AgentSecrets are the values scrubbed from what the session's agent says back: its MCP servers' env and
// headers, and the login variables it was started with.
func (c Control) AgentSecrets() []string { return c.s.agentSecrets() }

// AgentSession is the agent's session id, "" before the agent opened it. It is set once before the session
// is usable and never changes (a re-attach loads the same one), so code on a usable session reads it
// without mu.
func (c Control) AgentSession() string { return c.s.agentSession() }

// AgentSpec is the agent the session runs, as made for its owner; static after construction.
func (c Control) AgentSpec() agents.Spec { return c.s.agentSpec() }

// Allow checks who may take an action needing at least need. Nobody (the gateway's own code) always may.
func (c Control) Allow(who principal.Principal, need Access) error { return c.s.allow(who, need) }

// Answer is Answer by who, also returning the running turn the request belonged to.
func (c Control) Answer(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error) {
	return c.s.answer(who, permissionID, a, by)
}

// ApplyCopiedEntryLocked takes what a directory entry (at rev) and its view say that the log does not: modes,
// config options, the agent's info and session. A cold copy lists from the entry (its title, last turn and
// status), unless the entry is behind the frames a paused copy folded. The caller holds mu.
func (c Control) ApplyCopiedEntryLocked(e store.DirEntry, dv DirView, rev uint64) {
	c.s.applyCopiedEntryLocked(e, dv, rev)
}

// ApplyCopiedFrame folds one frame of the owner's stored log into the copy, under mu: the log, then the state
// the frame changes. A frame the copy holds already, or one arriving while it closes, is skipped; a frame
// that does not fold is logged and kept. folded runs under mu once the frame is in, with whether the
// session is closed now; an error leaves before it.
func (c Control) ApplyCopiedFrame(seq uint64, frame []byte, folded func(closed bool)) error {
	return c.s.applyCopiedFrame(seq, frame, folded)
}

// AttachAgent makes conn, which opened agentSID, the session's agent, and a starting session idle. It
// attaches nothing (attached false) once Close or shutdown (the end of stopping) has begun. ready reports
// that the session_ready frame was logged, which notes the directory entry too.
func (c Control) AttachAgent(conn *agents.Conn, agentSID string, modes, configOptions json.RawMessage, stopping context.Context) (attached, ready bool) {
	return c.s.attachAgent(conn, agentSID, modes, configOptions, stopping)
}

// AttachLoadedLocked makes conn, which took the agent session back, the session's agent, with the modes and
// config options its load answered. The session stays starting until its turn starts. The caller holds mu.
func (c Control) AttachLoadedLocked(conn *agents.Conn, modes, configOptions json.RawMessage) {
	c.s.attachLoadedLocked(conn, modes, configOptions)
}

// Audit logs an audited action on s by who (nothing when nobody acted: the gateway's own code).
func (c Control) Audit(who principal.Principal, action string, attrs ...any) {
	c.s.audit(who, action, attrs...)
}

// BeginClose marks the session closing: a re-attach in progress is cut short, the running turn cancelled and
// the pending permissions denied. It returns the agent (nil while starting: the start sees closing and stops
// its agent itself), the running turn, whether the agent could take requests, and the answers to deliver.
func (c Control) BeginClose() (conn *agents.Conn, t *Turn, wasUsable bool, answers []AnswerTo) {
	return c.s.beginClose()
}

// BeginDetach marks the session's agent as stopping for a detach, cancels the running turn and denies the
// pending permissions. It returns the agent, its running turn (nil when idle), the answers to deliver, and
// done, which the detach closes once it has ended. ok is false when the session has no agent to detach
// (starting, detached, ended, or closing); when another detach is stopping it, it waits for that one first.
func (c Control) BeginDetach() (conn *agents.Conn, t *Turn, answers []AnswerTo, done chan struct{}, ok bool) {
	return c.s.beginDetach()
}

// BeginReattachLocked marks the detached session starting for the prompt that re-attaches it; cancel ends
// that re-attach (Close calls it). The caller holds mu.
func (c Control) BeginReattachLocked(cancel context.CancelFunc) { c.s.beginReattachLocked(cancel) }

// BeginTurnLocked starts a turn by who (its id turnID, or a new one when "") on the idle session: the caller
// holds mu, which it releases. The turn's trace continues the one in ctx.
func (c Control) BeginTurnLocked(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string, key promptkey.Key) *Turn {
	return c.s.beginTurnLocked(ctx, who, blocks, turnID, key)
}

// ClientMCPServers are the MCP servers the client added, read as an agent's start reads them: they change
// only while the session is detached and no agent starts.
func (c Control) ClientMCPServers() []agents.MCPServer { return c.s.clientMCPServers() }

// CloseCopyLocked marks a copy closing and closed: its owner closed or removed the session. It logs nothing,
// the copy never writes. The caller holds mu.
func (c Control) CloseCopyLocked() { c.s.closeCopyLocked() }

// CloseOpenLog appends to a session rebuilt from the store, not shared, what closes its log as lc says, and
// returns the head before; appended is false when there was nothing to close. An open log (a turn, a pending
// request or a live status) closes in a new epoch: the denials, the turn's end and the status.
func (c Control) CloseOpenLog(lc LogClosing) (head uint64, appended bool) {
	return c.s.closeOpenLog(lc)
}

// CloseRoot releases the cwd's descriptor; fs/* requests after it fail as "cwd gone".
func (c Control) CloseRoot() { c.s.closeRoot() }

// CloseTerminals closes the terminals the gateway runs for the agent; killTerminals kills them. Either once
// the agent that used them is gone.
func (c Control) CloseTerminals() { c.s.closeTerminals() }

// ClosingLocked reports whether the session's end has begun. The caller holds mu.
func (c Control) ClosingLocked() bool { return c.s.closingLocked() }

// ColdFromEntry makes a new session, not yet shared, the cold session its directory entry e (revision rev,
// view dv) lists: detached, or failed when e says so, with e's agent session, shares and view. Its first use
// loads the log.
func (c Control) ColdFromEntry(e store.DirEntry, dv DirView, rev uint64) {
	c.s.coldFromEntry(e, dv, rev)
}

// DenyPending is denyPendingLocked under mu.
func (c Control) DenyPending(turnID, by, reason string) []AnswerTo {
	return c.s.denyPending(turnID, by, reason)
}

// DetachedAtRestLocked reports whether the session is detached with no re-attach in progress, the only time
// its client MCP servers may change. The caller holds mu.
func (c Control) DetachedAtRestLocked() bool { return c.s.detachedAtRestLocked() }

// DirEntry is the session's directory entry as the session knows it, its state read at one instant under mu.
// The store link adds what it alone knows: the owner, the incarnation, the time and whether the entry is
// clean.
func (c Control) DirEntry() store.DirEntry { return c.s.dirEntry() }

// EndCopy closes a closed copy's log and fires Closed: faces close their sockets as for a closed session.
func (c Control) EndCopy() { c.s.endCopy() }

// EndDetach logs the detached status with reason once the agent is gone, and drops the agent. It reports
// false, and logs nothing, when Close began meanwhile: Close, which waited for the same turn, reports the end.
func (c Control) EndDetach(reason string) bool { return c.s.endDetach(reason) }

// EndOnce runs end unless an end of the session ran before: a session ends once, by whichever of Close, a
// stand-down or a copy's close comes first.
func (c Control) EndOnce(end func()) { c.s.endOnce(end) }

// EndReattachLocked ends the re-attach state, and reports whether Close began meanwhile. The caller holds mu.
func (c Control) EndReattachLocked() (closing bool) { return c.s.endReattachLocked() }

// FailStoodDown ends a stood-down session whose agent stopped: its terminals close, its log states it failed
// for reason and closes, and Closed fires.
func (c Control) FailStoodDown(reason string) { c.s.failStoodDown(reason) }

// FailedOrClosed is what a copy answers at once for a session that is failed or closed as far as it knows:
// ErrFailed with the reason, or ErrClosed; nil otherwise.
func (c Control) FailedOrClosed() error { return c.s.failedOrClosed() }

// FinishClose closes the log and the cwd, then Closed: what is left of a closed session is its record.
func (c Control) FinishClose() { c.s.finishClose() }

// ForkFrom makes the session a fork of the agent session agentSID: its agent forks that one at start. Called
// before the session is shared.
func (c Control) ForkFrom(agentSID string) { c.s.forkFrom(agentSID) }

// ForkSource is the agent session a fork's agent forks, "" for a session that is no fork; static after
// construction.
func (c Control) ForkSource() string { return c.s.forkSource() }

// ForkableLocked is why the session cannot be a fork's source now, or nil: it is forked between turns, once
// its agent opened its session. The caller holds mu.
func (c Control) ForkableLocked() error { return c.s.forkableLocked() }

// HasClients reports whether a subscriber is attached.
func (c Control) HasClients() bool { return c.s.hasClients() }

// Hydrate loads a cold session on its first use (its runner's: a stored one's log, a copy's live feed).
func (c Control) Hydrate() error { return c.s.hydrate() }

// HydrateWith loads a cold session with load, once: concurrent callers wait for the same load, and a failed
// load is tried again by the next use. A session that is not cold returns at once.
func (c Control) HydrateWith(load func() error) error { return c.s.hydrateWith(load) }

// IdleSince reports whether the session has had no subscriber and no turn since before t.
func (c Control) IdleSince(t time.Time) bool { return c.s.idleSince(t) }

// InitCopy makes a session just made from a directory entry the copy of another node's session: its actions
// run by run, it says the entry's status until its frames state one, and it logs with the owner's node.
// Called before the session is shared.
func (c Control) InitCopy(run Runner, e store.DirEntry, rev uint64) { c.s.initCopy(run, e, rev) }

// IsCold reports whether the session is only its directory entry (not hydrated).
func (c Control) IsCold() bool { return c.s.isCold() }

// KeyedTurnLocked is the turn k already started, or nil when k is new. A known key with another prompt is
// ErrIdempotencyKeyReused. A turn no longer the session's running or latest one comes back ended, without
// its text. The caller holds mu.
func (c Control) KeyedTurnLocked(k promptkey.Key) (*Turn, error) { return c.s.keyedTurnLocked(k) }

// KillTerminals kills the session's terminals' processes.
func (c Control) KillTerminals() { c.s.killTerminals() }

// LastEpoch is lastEpochLocked under mu.
func (c Control) LastEpoch() string { return c.s.lastEpoch() }

// LastEpochLocked is the chain's last link, or Epoch before the chain has one. The caller holds mu.
func (c Control) LastEpochLocked() string { return c.s.lastEpochLocked() }

// ListFilesHere lists the files of the session this node runs.
func (c Control) ListFilesHere(opts FilesOptions) (agentsvc.ListResult, error) {
	return c.s.svc.ListFiles(opts)
}

// LoadDetached hydrates a cold session from its stored log and leaves it detached (failed stays failed): no
// agent runs. stoppedLocked runs first and persistLocked last (with the log's head), under mu with the
// restore, so no close and no append comes between; their errors are returned as they are.
func (c Control) LoadDetached(entries []eventlog.Entry, stoppedLocked func() error, persistLocked func(head uint64) error) error {
	return c.s.loadDetached(entries, stoppedLocked, persistLocked)
}

// Lock and unlock take and release the session's mu where the critical section is not one block.
func (c Control) Lock() { c.s.lock() }

// LogClosed logs the closed status with reason, the log's last frame.
func (c Control) LogClosed(reason string) { c.s.logClosed(reason) }

// LogInherited logs a fork's inherited transcript as the first frames of its log, translated and folded as
// an agent's updates are (outside any turn), and records where the fork's own frames begin.
func (c Control) LogInherited(history [][]byte) { c.s.logInherited(history) }

// LogTitle logs title, checked, as the session's on the node that runs it.
func (c Control) LogTitle(title string) error { return c.s.logTitle(title) }

// LoginRequired turns a session's failure to open into a LoginRequiredError when the agent answered
// auth_required (raw is the agent call's own error), naming the methods its initialize offered.
func (c Control) LoginRequired(raw, failed error) error { return c.s.loginRequired(raw, failed) }

// MarkAgentFailed fails the session whose agent conn went away: pending permissions are denied (the answers
// to deliver) and the failed status is logged. ok is false when conn is no longer the session's agent.
func (c Control) MarkAgentFailed(conn *agents.Conn, reason string) (answers []AnswerTo, ok bool) {
	return c.s.markAgentFailed(conn, reason)
}

// MarkClosingLocked marks the session's end begun (a copy at shutdown): a frame its feed still delivers is
// not folded. The caller holds mu.
func (c Control) MarkClosingLocked() { c.s.markClosingLocked() }

// MarkStoodDown marks the session stood down and closing (its agent's exit is expected; no Close will remove
// it from the store), ends a re-attach in progress and asks the running turn to cancel. It returns the agent
// and that turn, for the caller to stop and wait for.
func (c Control) MarkStoodDown() (*agents.Conn, *Turn) { return c.s.markStoodDown() }

// McpServers is the `mcpServers` the gateway sends the agent on session/new, session/load and session/resume:
// the configured servers, then the client's. Never nil (ACP requires the array).
func (c Control) McpServers() []agents.MCPServer { return c.s.mcpServers() }

// NewReadyGate holds the agent's updates that follow its session/new answer until release (status.go).
func (c Control) NewReadyGate() *ReadyGate { return c.s.newReadyGate() }

// NoteDir tells the host that the session's directory entry changed. It never blocks.
func (c Control) NoteDir() { c.s.noteDir() }

// NoteInitialize records an agent's initialize answer and what it says about taking a session back.
func (c Control) NoteInitialize(info, caps, authMethods json.RawMessage, canLoad, canResume bool) {
	c.s.noteInitialize(info, caps, authMethods, canLoad, canResume)
}

// NoteUsed notes a face's use of the session at now: a copy in use is not paused.
func (c Control) NoteUsed(now time.Time) { c.s.noteUsed(now) }

// PauseCopyLocked makes a live copy cold: it lists what its frames folded. The caller holds mu.
func (c Control) PauseCopyLocked() { c.s.pauseCopyLocked() }

// PromptHereLocked starts a turn on the session this node runs, or says by its status why it takes none now;
// a detached session goes to reattach, which re-attaches it and starts the turn. The caller holds mu, which
// it releases (reattach too).
func (c Control) PromptHereLocked(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string, key promptkey.Key, reattach func() (*Turn, error)) (*Turn, error) {
	return c.s.promptHereLocked(ctx, who, blocks, turnID, key, reattach)
}

// RedetachLocked puts a session whose re-attach failed back to detached; its log is untouched. The caller
// holds mu.
func (c Control) RedetachLocked() { c.s.redetachLocked() }

// RefuseReattachLocked makes reason, a refused re-attach, the detached session's status reason, told to
// clients with a logged session_status frame when it is new. The caller holds mu.
func (c Control) RefuseReattachLocked(reason string, cause error) {
	c.s.refuseReattachLocked(reason, cause)
}

// RelistPausedCopy lists on a paused copy what it folded by now: its feed may have applied a frame while it
// stopped. A copy used again meanwhile is left alone.
func (c Control) RelistPausedCopy() { c.s.relistPausedCopy() }

// ReopenWorkspace makes root, the stored cwd opened after its check, the directory fs/* serves. false once
// the session is closed (root is closed then).
func (c Control) ReopenWorkspace(root *os.Root) bool { return c.s.reopenWorkspace(root) }

// ReplayLocked is the transcript as session/update params, as Replay gives it. The caller holds mu.
func (c Control) ReplayLocked() [][]byte { return c.s.replayLocked() }

// RequestTurnID is the turn of the pending permission request id, "" when none is pending here.
func (c Control) RequestTurnID(id string) string { return c.s.requestTurnID(id) }

// RestoreLive rebuilds a new session, not shared, from its whole stored log as live as its entry said: the
// log's own status frames and turns decide its state.
func (c Control) RestoreLive(entries []eventlog.Entry) error { return c.s.restoreLive(entries) }

// ResumeInfo is how a re-attach takes the agent session back: whether the agent loads or resumes, and which.
func (c Control) ResumeInfo() (canLoad, canResume bool, agentSID string) { return c.s.resumeInfo() }

// Runner is where the session's actions run, and the role state with them. Read without mu: the host sets
// it before the session is shared, and it never changes after.
func (c Control) Runner() Runner { return c.s.runner() }

// SessionHost is the host that holds the session; static after construction.
func (c Control) SessionHost() Host { return c.s.sessionHost() }

// SessionLogger is the session's logger (its id and agent attached); static after construction.
func (c Control) SessionLogger() *slog.Logger { return c.s.sessionLogger() }

// SetClientMCPLocked replaces the MCP servers the client added, and reports whether they changed. Written
// under mu while detached: the agent's start, which reads them, begins after a prompt takes the session out
// of detached under mu. The caller holds mu.
func (c Control) SetClientMCPLocked(client []agents.MCPServer) (changed bool) {
	return c.s.setClientMCPLocked(client)
}

// SetLoginSecrets records the login values the agent is started with, to scrub them from what it says.
func (c Control) SetLoginSecrets(secrets []string) { c.s.setLoginSecrets(secrets) }

// SetRunner makes r where the session's actions run. The host calls it once, before the session is shared.
func (c Control) SetRunner(r Runner) { c.s.setRunner(r) }

// SetShare sets with's share of the session to role; "" ends it. It takes only the shares' own lock.
func (c Control) SetShare(with string, role store.ShareRole) { c.s.shares.Set(with, role) }

// ShareOnCopy makes on the copy at once a share change the owner made in the entry at rev (0 = unknown): with's
// role, "" ending it. A copy that holds a newer entry already (the change, or what came after it) keeps it.
func (c Control) ShareOnCopy(rev uint64, with string, role store.ShareRole) {
	c.s.shareOnCopy(rev, with, role)
}

// SharesChanged applies a change of the shares to open streams: the subscribers of a principal who may no
// longer see the session lose it (Lost), a delegate whose principal may no longer act gives back the fs/* and
// terminal/* requests it holds, and presence is published again (roles change).
func (c Control) SharesChanged() { c.s.sharesChanged() }

// StatusLocked is the session's status and its reason. The caller holds mu.
func (c Control) StatusLocked() (store.Status, string) { return c.s.statusLocked() }

// StoodDownNow reports whether the session was stood down.
func (c Control) StoodDownNow() bool { return c.s.stoodDownNow() }

// TakeCopiedShares takes the shares of the directory entry at rev, unless the copy holds a newer entry's (a
// lookup read a newer entry than the watch delivers, or a share made through this node). A principal no
// longer shared with loses its streams here too.
func (c Control) TakeCopiedShares(list []store.Share, rev uint64) { c.s.takeCopiedShares(list, rev) }

// TakeForkedAt sets the seq of the last frame a fork inherited, as its owner's reply names it: a copy of a
// fork cannot tell from its frames.
func (c Control) TakeForkedAt(seq uint64) { c.s.takeForkedAt(seq) }

// TurnByID is the running or latest turn if it has id.
func (c Control) TurnByID(id string) *Turn { return c.s.turnByID(id) }

// TurnByIDLocked is TurnByID with mu held.
func (c Control) TurnByIDLocked(id string) *Turn { return c.s.turnByIDLocked(id) }

// Unlock releases the session's mu that Lock took.
func (c Control) Unlock() { c.s.unlock() }

// UnusedSinceLocked reports whether nobody used the live session since cutoff: no subscriber, no turn, not
// closing. The caller holds mu.
func (c Control) UnusedSinceLocked(cutoff time.Time) bool { return c.s.unusedSinceLocked(cutoff) }

// Usable reports whether the session can take requests for its agent, and returns the agent.
func (c Control) Usable() (*agents.Conn, error) { return c.s.usable() }

// WarmCopyLocked makes a cold copy live once its feed has read the stored log: it streams in the epoch its
// frames carry (nobody streams a cold session yet). The caller holds mu.
func (c Control) WarmCopyLocked() { c.s.warmCopyLocked() }

// WithLock runs fn under the session's mu.
func (c Control) WithLock(fn func()) { c.s.withLock(fn) }

package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/google/uuid"
)

// Commands on a follower go to the session's owner (docs/cluster.md §5): the owner runs the same method on its
// session, checks who asked as it would locally, and answers with the result and its log's head; the
// follower waits until its log reached that head, so the turn the command started or the request it resolved
// is visible here before the face answers. Errors come back as the owner's sentinels: every face answers
// exactly as on the owner.

// Command ops.
const (
	opCreate       = "create"
	opPrompt       = "prompt"
	opCancel       = "cancel"
	opAnswer       = "answer"
	opSetMode      = "set_mode"
	opSetConfig    = "set_config_option"
	opClose        = "close"
	opShare        = "share"
	opUnshare      = "unshare"
	opAuthenticate = "authenticate"
	opAttachMCP    = "attach_mcp"
	opFork         = "fork" // SID is the source; the owner forks it (fork.go)
	opRename       = "rename"
	opListFiles    = "list_files"
)

type promptArgs struct {
	Blocks         []json.RawMessage `json:"blocks"`
	TurnID         string            `json:"turnId"`
	IdempotencyKey string            `json:"idempotencyKey,omitempty"`
}

type answerArgs struct {
	PermissionID string           `json:"permissionId"`
	Answer       ask.ClientAnswer `json:"answer"`
	By           string           `json:"by"`
}

type setModeArgs struct {
	ModeID string `json:"modeId"`
}

type setConfigArgs struct {
	ConfigID string          `json:"configId"`
	Value    json.RawMessage `json:"value"`
}

type closeArgs struct {
	Reason string `json:"reason"`
	// Delete also removes the agent's own copy of the session (DeleteAs, delete.go).
	Delete bool `json:"delete,omitempty"`
}

type shareArgs struct {
	With string          `json:"with"`
	Role store.ShareRole `json:"role,omitempty"`
}

// shareResult is the directory revision of the entry that holds a share change (0 = unknown).
type shareResult struct {
	Rev uint64 `json:"rev,omitempty"`
}

type createArgs struct {
	Agent            string          `json:"agent,omitempty"`
	Cwd              string          `json:"cwd,omitempty"`
	AdditionalDirs   []string        `json:"additionalDirectories,omitempty"`
	PermissionPolicy string          `json:"permissionPolicy,omitempty"`
	MCPServers       json.RawMessage `json:"mcpServers,omitempty"`
}

type turnResult struct {
	TurnID string `json:"turnId"`
	// Replayed says a keyed prompt named the turn its key had started (a prompt only).
	Replayed bool `json:"replayed,omitempty"`
}

type createResult struct {
	ID     string       `json:"id"`
	Status store.Status `json:"status"` // as the owner returned it: starting → idle is not in the log
	// ForkedAt is a fork's ForkedAt (fork.go); 0 for a session that is no fork.
	ForkedAt uint64 `json:"forkedAt,omitempty"`
}

// route sends op on the session to its owner and decodes the result into out (nil = none).
func (r remoteRunner) route(ctx context.Context, op string, who principal.Principal, args any, bound time.Duration, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	s := r.f.s
	var node string
	core.ControlOf(s).WithLock(func() { node = r.f.node })
	rep, err := r.f.reg.call(ctx, node, store.Command{Op: op, SID: s.ID, Args: raw, Principal: who, Bound: bound})
	if err != nil {
		return err
	}
	r.f.awaitHead(ctx, rep.Head) // an error may have logged frames too (a failed re-attach)
	if rep.Error != nil {
		return sessionerr.ReplyErr(rep.Error)
	}
	if out != nil && len(rep.Result) > 0 {
		return json.Unmarshal(rep.Result, out)
	}
	return nil
}

// ended is what a follower answers at once, without routing, for a session that is failed or closed as far
// as it knows: 409 session_failed or session_closed. The owner of a failed session may be gone for good (a
// node loss), and nothing it could answer would start a turn.
func (f *follower) ended() error { return core.ControlOf(f.s).FailedOrClosed() }

// startBound is how long a routed operation that may start the agent (a create, a prompt that re-attaches)
// may take on the owner: initialize and session/new or session/load, each bounded by StartTimeout.
func (r *Registry) startBound() time.Duration { return 2*r.cfg.StartTimeout + 5*time.Second }

// Prompt has the owner start the turn (or name the one its key started) and waits until this copy
// holds it. The caller checked who may prompt.
func (r remoteRunner) Prompt(ctx context.Context, who principal.Principal, blocks []json.RawMessage, opts PromptOptions, key promptkey.Key) (*Turn, bool, error) {
	f := r.f
	if err := f.ended(); err != nil {
		return nil, false, err
	}
	turnID := opts.TurnID
	if turnID == "" {
		turnID = uuid.NewString()
	}
	var res turnResult
	args := promptArgs{Blocks: blocks, TurnID: turnID, IdempotencyKey: opts.IdempotencyKey}
	if err := r.route(ctx, opPrompt, who, args, f.reg.startBound(), &res); err != nil {
		return nil, false, err
	}
	if res.TurnID != "" {
		turnID = res.TurnID // a replay: the turn the key started
	}
	// The owner started the turn. Its frames may still be on their way (a feed behind under load): 503 "retry"
	// would invite a second prompt, so wait for them as long as a start may take.
	if t := f.awaitTurn(ctx, turnID, f.reg.startBound(), key); t != nil {
		return t, res.Replayed, nil
	}
	if !f.reg.storeHealthy() {
		return nil, false, fmt.Errorf("%w: the turn %s started on the session's node, but its frames cannot reach this node while the NATS cluster takes no writes; watch the session rather than prompt again", sessionerr.ErrStoreUnavailable, turnID)
	}
	return nil, false, fmt.Errorf("%w: the turn's frames did not arrive from the session's node", store.ErrOwnerTimeout)
}

// awaitTurn waits (at most bound) until the follower holds the turn id from the owner's frames.
// A replayed turn older than the latest is found by its key (none: key.Key "").
func (f *follower) awaitTurn(ctx context.Context, id string, bound time.Duration, key promptkey.Key) *Turn {
	s := f.s
	var t *Turn
	f.awaitCopy(ctx, bound, func() bool {
		if t = core.ControlOf(s).TurnByIDLocked(id); t == nil {
			if kt, _ := core.ControlOf(s).KeyedTurnLocked(key); kt != nil && kt.ID == id {
				t = kt
			}
		}
		return t != nil
	})
	return t
}

// remoteRunner routes a follower's actions to the node that owns the session.
type remoteRunner struct{ f *follower }

func (r remoteRunner) Cancel(ctx context.Context, who principal.Principal) (string, error) {
	s := r.f.s
	if err := core.ControlOf(s).Allow(who, AccessAct); err != nil {
		return "", err
	}
	if err := r.f.ended(); err != nil {
		return "", err
	}
	var res turnResult
	err := r.route(ctx, opCancel, who, struct{}{}, r.f.reg.cfg.CallTimeout, &res)
	return res.TurnID, err
}

// Rename has the owner log the title; the caller's copy holds it when this returns.
func (r remoteRunner) Rename(ctx context.Context, who principal.Principal, title string) error {
	f := r.f
	if err := f.ended(); err != nil {
		return err
	}
	return r.route(ctx, opRename, who, core.RenameArgs{Title: title}, f.reg.cfg.CallTimeout, nil)
}

// ListFiles asks the owner, whose disk holds the session's cwd.
func (r remoteRunner) ListFiles(ctx context.Context, who principal.Principal, opts FilesOptions) (agentsvc.ListResult, error) {
	f := r.f
	if err := f.ended(); err != nil {
		return agentsvc.ListResult{}, err
	}
	var out agentsvc.ListResult
	err := r.route(ctx, opListFiles, who, opts, f.reg.cfg.CallTimeout, &out)
	return out, err
}

func (r remoteRunner) Answer(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error) {
	s := r.f.s
	c := core.ControlOf(s)
	if err := c.Allow(who, AccessAct); err != nil {
		return ask.Outcome{}, nil, err
	}
	if err := r.f.ended(); err != nil {
		return ask.Outcome{}, nil, err
	}
	turnID := c.RequestTurnID(permissionID)
	var o ask.Outcome
	err := r.route(context.Background(), opAnswer, who, answerArgs{PermissionID: permissionID, Answer: a, By: by}, r.f.reg.cfg.CallTimeout, &o)
	if err != nil {
		return ask.Outcome{}, nil, err
	}
	var t *Turn
	if turnID != "" {
		t = c.TurnByID(turnID)
	} else {
		t = s.CurrentTurn() // the request reached this copy with its answer: it was the running turn's
	}
	return o, t, nil
}

func (r remoteRunner) SetMode(ctx context.Context, who principal.Principal, modeID string) error {
	s := r.f.s
	if err := core.ControlOf(s).Allow(who, AccessOwn); err != nil {
		return err
	}
	if err := r.f.ended(); err != nil {
		return err
	}
	return r.route(ctx, opSetMode, who, setModeArgs{ModeID: modeID}, r.f.reg.cfg.CallTimeout, nil)
}

func (r remoteRunner) SetConfig(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error) {
	s := r.f.s
	if err := core.ControlOf(s).Allow(who, AccessOwn); err != nil {
		return nil, err
	}
	if err := r.f.ended(); err != nil {
		return nil, err
	}
	var opts json.RawMessage
	err := r.route(ctx, opSetConfig, who, setConfigArgs{ConfigID: configID, Value: value}, r.f.reg.cfg.CallTimeout, &opts)
	return opts, err
}

// Close closes the session on its owner; the follower closes when it sees the session's end.
func (r remoteRunner) Close(who principal.Principal, reason string) error {
	s := r.f.s
	c := core.ControlOf(s)
	if err := c.Allow(who, AccessOwn); err != nil {
		return err
	}
	var node string
	var st store.Status
	c.WithLock(func() {
		node = r.f.node
		st, _ = c.StatusLocked()
	})
	if (st == store.StatusFailed || st == store.StatusDetached) && !r.f.reg.liveNode(node) {
		return r.removeForGoneOwner(who, reason)
	}
	bound := r.f.reg.cfg.CancelGrace + 4*r.f.reg.cfg.StopGrace + dirWriteTimeout
	return r.route(context.Background(), opClose, who, closeArgs{Reason: reason}, bound, nil)
}

// liveNode reports whether node beats in the cluster.
func (r *Registry) liveNode(node string) bool {
	for _, n := range r.cfg.Cluster.Nodes() {
		if n.ID == node {
			return true
		}
	}
	return false
}

// removeForGoneOwner closes a session whose owner is not live and whose agent does not run (failed by the
// node's loss, or detached): nobody else would ever remove it. The entry is marked closed by CAS (a returning
// owner's claim wins: the close then goes to it), then the log and the entry are removed; every node's
// follower ends with the removal.
func (r remoteRunner) removeForGoneOwner(who principal.Principal, reason string) error {
	s := r.f.s
	ctx, cancel := context.WithTimeout(context.Background(), dirWriteTimeout)
	defer cancel()
	dir := r.f.reg.cfg.Store.Dir()
	e, rev, err := dir.Get(ctx, s.ID)
	switch {
	case errors.Is(err, sessionerr.ErrNotFound):
		r.f.close()
		return nil
	case err != nil:
		return fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	case e.Status != store.StatusFailed && e.Status != store.StatusDetached:
		return fmt.Errorf("%w: its node %q is not live", store.ErrOwnerUnavailable, e.Owner)
	}
	e.Status, e.Reason = store.StatusClosed, reason
	if _, err := dir.Update(ctx, e, rev); err != nil {
		return fmt.Errorf("%w: the session changed while it was closed: %v", store.ErrOwnerUnavailable, err)
	}
	if err := r.f.reg.cfg.Store.Remove(ctx, s.ID); err != nil {
		return fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	}
	core.ControlOf(s).Audit(who, "close", "reason", reason, "owner", e.Owner)
	r.f.close()
	return nil
}

// Share changes a share on the owner ("" role: ends it), then here at once (the directory change follows). The owner
// answers with the revision of the entry holding the change: an older entry the watch delivers later must not
// undo it here (applyEntry).
func (r remoteRunner) Share(who principal.Principal, with string, role store.ShareRole) error {
	s := r.f.s
	op := opShare
	if role == "" {
		op = opUnshare
	}
	var res shareResult
	if err := r.route(context.Background(), op, who, shareArgs{With: with, Role: role}, r.f.reg.cfg.CallTimeout, &res); err != nil {
		return err
	}
	core.ControlOf(s).ShareOnCopy(res.Rev, with, role)
	return nil
}

func (r remoteRunner) Authenticate(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	f := r.f
	var res json.RawMessage
	err := r.route(ctx, opAuthenticate, principal.Principal{}, params, f.reg.cfg.StartTimeout, &res)
	return res, err
}

func (r remoteRunner) AttachMCP(who principal.Principal, servers []agents.MCPServer) error {
	return r.route(context.Background(), opAttachMCP, who, servers, r.f.reg.cfg.CallTimeout, nil)
}

func (r remoteRunner) CloseHere(string) { r.f.close() } // CloseAs closes the session on its owner

// DelegateFS offers nothing: the owner serves its agent's fs/* itself; a client on another node is never asked.
func (r remoteRunner) DelegateFS(principal.Principal, FSDelegate) (release func()) { return func() {} }

// createRemote creates the session on another live node and returns this node's follower of it.
func (r *Registry) createRemote(ctx context.Context, opts CreateOptions) (*Session, error) {
	live := false
	for _, n := range r.cfg.Cluster.Nodes() {
		live = live || n.ID == opts.Node
	}
	if !live {
		return nil, fmt.Errorf("%w: %q is not a live node", sessionerr.ErrUnknownNode, opts.Node)
	}
	args := createArgs{Agent: opts.Agent, Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs, PermissionPolicy: opts.PermissionPolicy}
	if len(opts.MCPServers) > 0 {
		args.MCPServers, _ = json.Marshal(opts.MCPServers)
	}
	raw, _ := json.Marshal(args)
	rep, err := r.call(ctx, opts.Node, store.Command{Op: opCreate, Args: raw, Principal: opts.Owner, Bound: r.startBound()})
	if err != nil {
		return nil, err
	}
	return r.followCreated(ctx, opts, rep)
}

// followCreated is the follower of the session another node created (or forked) for a caller here, once
// this copy holds what the owner's reply says it logged.
func (r *Registry) followCreated(ctx context.Context, opts CreateOptions, rep store.Reply) (*Session, error) {
	if rep.Error != nil {
		return nil, sessionerr.ReplyErr(rep.Error)
	}
	var res createResult
	if err := json.Unmarshal(rep.Result, &res); err != nil {
		return nil, err
	}
	s, err := r.Get(res.ID)
	if err != nil {
		r.closeCreated(opts, res.ID)
		return nil, err
	}
	followerOf(s).awaitHead(ctx, rep.Head) // the owner's session_ready is in its log before its answer
	if res.ForkedAt > 0 {
		core.ControlOf(s).TakeForkedAt(res.ForkedAt)
	}
	return s, nil
}

// closeCreated closes on its node a session created for a caller this node then answers an error (it is
// shutting down, or the store did not answer): an error means no session, not one left running there that
// the caller never learnt of.
func (r *Registry) closeCreated(opts CreateOptions, id string) {
	raw, _ := json.Marshal(closeArgs{Reason: "its creation failed on node " + r.cfg.NodeID})
	bound := r.cfg.CancelGrace + 4*r.cfg.StopGrace + dirWriteTimeout
	_, err := r.call(context.Background(), opts.Node, store.Command{Op: opClose, SID: id, Args: raw, Principal: opts.Owner, Bound: bound})
	if err != nil {
		r.cfg.Logger.Warn("a session created on another node for a failed create is not closed", "session", id, "node", opts.Node, "err", err)
	}
}

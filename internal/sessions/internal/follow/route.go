package follow

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
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/google/uuid"
)

// Commands on a follower go to the session's owner (docs/cluster.md §5): the owner runs the same method on its
// session, checks who asked as it would locally, and answers with the result and its log's head; the
// follower waits until its log reached that head, so the turn the command started or the request it resolved
// is visible here before the face answers. Errors come back as the owner's sentinels: every face answers
// exactly as on the owner.

// route sends op on the session to its owner and decodes the result into out (nil = none).
func (r Runner) route(ctx context.Context, op string, who principal.Principal, args any, bound time.Duration, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	s := r.f.s
	var node string
	core.ControlOf(s).WithLock(func() { node = r.f.node })
	rep, err := r.f.host.Call(ctx, node, store.Command{Op: op, SID: s.ID, Args: raw, Principal: who, Bound: bound})
	if err != nil {
		return err
	}
	r.f.AwaitHead(ctx, rep.Head) // an error may have logged frames too (a failed re-attach)
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
func (f *Follower) Ended() error { return core.ControlOf(f.s).FailedOrClosed() }

// Prompt has the owner start the turn (or name the one its key started) and waits until this copy
// holds it. The caller checked who may prompt.
func (r Runner) Prompt(ctx context.Context, who principal.Principal, blocks []json.RawMessage, opts core.PromptOptions, key promptkey.Key) (*turns.Turn, bool, error) {
	f := r.f
	if err := f.Ended(); err != nil {
		return nil, false, err
	}
	turnID := opts.TurnID
	if turnID == "" {
		turnID = uuid.NewString()
	}
	var res TurnResult
	args := PromptArgs{Blocks: blocks, TurnID: turnID, IdempotencyKey: opts.IdempotencyKey}
	if err := r.route(ctx, OpPrompt, who, args, f.cfg.StartBound(), &res); err != nil {
		return nil, false, err
	}
	if res.TurnID != "" {
		turnID = res.TurnID // a replay: the turn the key started
	}
	// The owner started the turn. Its frames may still be on their way (a feed behind under load): 503 "retry"
	// would invite a second prompt, so wait for them as long as a start may take.
	if t := f.awaitTurn(ctx, turnID, f.cfg.StartBound(), key); t != nil {
		return t, res.Replayed, nil
	}
	if !f.host.StoreHealthy() {
		return nil, false, fmt.Errorf("%w: the turn %s started on the session's node, but its frames cannot reach this node while the NATS cluster takes no writes; watch the session rather than prompt again", sessionerr.ErrStoreUnavailable, turnID)
	}
	return nil, false, fmt.Errorf("%w: the turn's frames did not arrive from the session's node", store.ErrOwnerTimeout)
}

// awaitTurn waits (at most bound) until the follower holds the turn id from the owner's frames.
// A replayed turn older than the latest is found by its key (none: key.Key "").
func (f *Follower) awaitTurn(ctx context.Context, id string, bound time.Duration, key promptkey.Key) *turns.Turn {
	s := f.s
	var t *turns.Turn
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

// Runner routes a follower's actions to the node that owns the session.
type Runner struct{ f *Follower }

func (r Runner) Cancel(ctx context.Context, who principal.Principal) (string, error) {
	s := r.f.s
	if err := core.ControlOf(s).Allow(who, access.Act); err != nil {
		return "", err
	}
	if err := r.f.Ended(); err != nil {
		return "", err
	}
	var res TurnResult
	err := r.route(ctx, OpCancel, who, struct{}{}, r.f.cfg.CallTimeout, &res)
	return res.TurnID, err
}

// Rename has the owner log the title; the caller's copy holds it when this returns.
func (r Runner) Rename(ctx context.Context, who principal.Principal, title string) error {
	f := r.f
	if err := f.Ended(); err != nil {
		return err
	}
	return r.route(ctx, OpRename, who, core.RenameArgs{Title: title}, f.cfg.CallTimeout, nil)
}

// ListFiles asks the owner, whose disk holds the session's cwd.
func (r Runner) ListFiles(ctx context.Context, who principal.Principal, opts services.FilesOptions) (agentsvc.ListResult, error) {
	f := r.f
	if err := f.Ended(); err != nil {
		return agentsvc.ListResult{}, err
	}
	var out agentsvc.ListResult
	err := r.route(ctx, OpListFiles, who, opts, f.cfg.CallTimeout, &out)
	return out, err
}

func (r Runner) Answer(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *turns.Turn, error) {
	s := r.f.s
	c := core.ControlOf(s)
	if err := c.Allow(who, access.Act); err != nil {
		return ask.Outcome{}, nil, err
	}
	if err := r.f.Ended(); err != nil {
		return ask.Outcome{}, nil, err
	}
	turnID := c.RequestTurnID(permissionID)
	var o ask.Outcome
	err := r.route(context.Background(), OpAnswer, who, AnswerArgs{PermissionID: permissionID, Answer: a, By: by}, r.f.cfg.CallTimeout, &o)
	if err != nil {
		return ask.Outcome{}, nil, err
	}
	var t *turns.Turn
	if turnID != "" {
		t = c.TurnByID(turnID)
	} else {
		t = s.CurrentTurn() // the request reached this copy with its answer: it was the running turn's
	}
	return o, t, nil
}

func (r Runner) SetMode(ctx context.Context, who principal.Principal, modeID string) error {
	s := r.f.s
	if err := core.ControlOf(s).Allow(who, access.Own); err != nil {
		return err
	}
	if err := r.f.Ended(); err != nil {
		return err
	}
	return r.route(ctx, OpSetMode, who, SetModeArgs{ModeID: modeID}, r.f.cfg.CallTimeout, nil)
}

func (r Runner) SetConfig(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error) {
	s := r.f.s
	if err := core.ControlOf(s).Allow(who, access.Own); err != nil {
		return nil, err
	}
	if err := r.f.Ended(); err != nil {
		return nil, err
	}
	var opts json.RawMessage
	err := r.route(ctx, OpSetConfig, who, SetConfigArgs{ConfigID: configID, Value: value}, r.f.cfg.CallTimeout, &opts)
	return opts, err
}

// Close closes the session on its owner; the follower closes when it sees the session's end.
func (r Runner) Close(who principal.Principal, reason string) error {
	s := r.f.s
	c := core.ControlOf(s)
	if err := c.Allow(who, access.Own); err != nil {
		return err
	}
	var node string
	var st store.Status
	c.WithLock(func() {
		node = r.f.node
		st, _ = c.StatusLocked()
	})
	if (st == store.StatusFailed || st == store.StatusDetached) && !r.f.host.LiveNode(node) {
		return r.removeForGoneOwner(who, reason)
	}
	bound := r.f.cfg.CloseBound()
	return r.route(context.Background(), OpClose, who, CloseArgs{Reason: reason}, bound, nil)
}

// removeForGoneOwner closes a session whose owner is not live and whose agent does not run (failed by the
// node's loss, or detached): nobody else would ever remove it. The entry is marked closed by CAS (a returning
// owner's claim wins: the close then goes to it), then the log and the entry are removed; every node's
// follower ends with the removal.
func (r Runner) removeForGoneOwner(who principal.Principal, reason string) error {
	s := r.f.s
	ctx, cancel := context.WithTimeout(context.Background(), r.f.cfg.DirWrite)
	defer cancel()
	dir := r.f.cfg.Store.Dir()
	e, rev, err := dir.Get(ctx, s.ID)
	switch {
	case errors.Is(err, sessionerr.ErrNotFound):
		r.f.Close()
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
	if err := r.f.cfg.Store.Remove(ctx, s.ID); err != nil {
		return fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	}
	core.ControlOf(s).Audit(who, "close", "reason", reason, "owner", e.Owner)
	r.f.Close()
	return nil
}

// Share changes a share on the owner ("" role: ends it), then here at once (the directory change follows). The owner
// answers with the revision of the entry holding the change: an older entry the watch delivers later must not
// undo it here (applyEntry).
func (r Runner) Share(who principal.Principal, with string, role store.ShareRole) error {
	s := r.f.s
	op := OpShare
	if role == "" {
		op = OpUnshare
	}
	var res ShareResult
	if err := r.route(context.Background(), op, who, ShareArgs{With: with, Role: role}, r.f.cfg.CallTimeout, &res); err != nil {
		return err
	}
	core.ControlOf(s).ShareOnCopy(res.Rev, with, role)
	return nil
}

func (r Runner) Authenticate(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	f := r.f
	var res json.RawMessage
	err := r.route(ctx, OpAuthenticate, principal.Principal{}, params, f.cfg.StartTimeout, &res)
	return res, err
}

func (r Runner) AttachMCP(who principal.Principal, servers []agents.MCPServer) error {
	return r.route(context.Background(), OpAttachMCP, who, servers, r.f.cfg.CallTimeout, nil)
}

func (r Runner) CloseHere(string) { r.f.Close() } // CloseAs closes the session on its owner

// DelegateFS offers nothing: the owner serves its agent's fs/* itself; a client on another node is never asked.
func (r Runner) DelegateFS(principal.Principal, services.FSDelegate) (release func()) {
	return func() {}
}

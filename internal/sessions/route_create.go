package sessions

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/store"
)

// A session created (or forked) on another node for a caller here: the command routed to that node, and this
// node's follower of the new session.

// liveNode reports whether node beats in the cluster.
func (r *Registry) liveNode(node string) bool {
	for _, n := range r.cfg.Cluster.Nodes() {
		if n.ID == node {
			return true
		}
	}
	return false
}

// createRemote creates the session on another live node and returns this node's follower of it.
func (r *Registry) createRemote(ctx context.Context, opts CreateOptions) (*Session, error) {
	live := false
	for _, n := range r.cfg.Cluster.Nodes() {
		live = live || n.ID == opts.Node
	}
	if !live {
		return nil, fmt.Errorf("%w: %q is not a live node", sessionerr.ErrUnknownNode, opts.Node)
	}
	args := follow.CreateArgs{Agent: opts.Agent, Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs, PermissionPolicy: opts.PermissionPolicy}
	if len(opts.MCPServers) > 0 {
		args.MCPServers, _ = json.Marshal(opts.MCPServers)
	}
	raw, _ := json.Marshal(args)
	rep, err := r.call(ctx, opts.Node, store.Command{Op: follow.OpCreate, Args: raw, Principal: opts.Owner, Bound: r.followCfg.StartBound()})
	if err != nil {
		return nil, err
	}
	return r.followCreated(ctx, opts, rep)
}

// forkRemote has the node that owns src fork it there; the fork is that node's session and this node serves
// a follower of it, as for a create routed to another node.
func (r *Registry) forkRemote(ctx context.Context, who principal.Principal, src *Session, opts ForkOptions) (*Session, error) {
	args := follow.ForkArgs{Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs}
	if len(opts.MCPServers) > 0 {
		args.MCPServers, _ = json.Marshal(opts.MCPServers)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	node := follow.Of(src).Node()
	rep, err := r.call(ctx, node, store.Command{Op: follow.OpFork, SID: src.ID, Args: raw, Principal: who, Bound: r.followCfg.StartBound()})
	if err != nil {
		return nil, err
	}
	return r.followCreated(ctx, CreateOptions{Owner: who, Node: node}, rep)
}

// followCreated is the follower of the session another node created (or forked) for a caller here, once
// this copy holds what the owner's reply says it logged.
func (r *Registry) followCreated(ctx context.Context, opts CreateOptions, rep store.Reply) (*Session, error) {
	if rep.Error != nil {
		return nil, sessionerr.ReplyErr(rep.Error)
	}
	var res follow.CreateResult
	if err := json.Unmarshal(rep.Result, &res); err != nil {
		return nil, err
	}
	s, err := r.Get(res.ID)
	if err != nil {
		r.closeCreated(opts, res.ID)
		return nil, err
	}
	follow.Of(s).AwaitHead(ctx, rep.Head) // the owner's session_ready is in its log before its answer
	if res.ForkedAt > 0 {
		core.ControlOf(s).TakeForkedAt(res.ForkedAt)
	}
	return s, nil
}

// closeCreated closes on its node a session created for a caller this node then answers an error (it is
// shutting down, or the store did not answer): an error means no session, not one left running there that
// the caller never learnt of.
func (r *Registry) closeCreated(opts CreateOptions, id string) {
	raw, _ := json.Marshal(follow.CloseArgs{Reason: "its creation failed on node " + r.cfg.NodeID})
	_, err := r.call(context.Background(), opts.Node, store.Command{Op: follow.OpClose, SID: id, Args: raw, Principal: opts.Owner, Bound: r.followCfg.CloseBound()})
	if err != nil {
		r.cfg.Logger.Warn("a session created on another node for a failed create is not closed", "session", id, "node", opts.Node, "err", err)
	}
}

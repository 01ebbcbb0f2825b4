package sessions

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/store"
)

// serveCommand runs a command another node routed to a session this node owns (route.go), with the same
// method and the same checks of who asked as a local face, and answers with the result and the log's head.
func (r *Registry) serveCommand(ctx context.Context, cmd store.Command) store.Reply {
	switch cmd.Op {
	case follow.OpCreate:
		return r.serveCreate(ctx, cmd)
	case follow.OpFork:
		return r.serveFork(ctx, cmd)
	}
	s, err := r.owned(cmd.SID)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	res, err := r.runCommand(ctx, s, cmd)
	return sessionerr.ReplyTo(res, s.Log().Head(), err)
}

// owned is a session this node owns, hydrated; a follower is not one.
func (r *Registry) owned(id string) (*Session, error) {
	r.mu.Lock()
	s, ok := r.sessions[id]
	r.mu.Unlock()
	if !ok {
		return nil, sessionerr.ErrNotFound
	}
	if err := core.ControlOf(s).Hydrate(); err != nil {
		return nil, err
	}
	return s, nil
}

// runCommand runs cmd on s through the session's public methods, so who asked is checked as for a face of
// this node. It is the registry's, as the server of routed commands, not localRunner's: the runner is what
// those methods call once they have checked.
func (r *Registry) runCommand(ctx context.Context, s *Session, cmd store.Command) (any, error) {
	who := cmd.Principal
	switch cmd.Op {
	case follow.OpPrompt:
		var a follow.PromptArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		t, replayed, err := s.PromptWith(ctx, who, a.Blocks, PromptOptions{TurnID: a.TurnID, IdempotencyKey: a.IdempotencyKey})
		if err != nil {
			return nil, err
		}
		return follow.TurnResult{TurnID: t.ID, Replayed: replayed}, nil
	case follow.OpCancel:
		id, err := s.CancelAs(ctx, who)
		return follow.TurnResult{TurnID: id}, err
	case follow.OpAnswer:
		var a follow.AnswerArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		o, _, err := s.AnswerInTurnAs(who, a.PermissionID, a.Answer, a.By)
		return o, err
	case follow.OpSetMode:
		var a follow.SetModeArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		return nil, s.SetModeAs(ctx, who, a.ModeID)
	case follow.OpSetConfig:
		var a follow.SetConfigArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		return s.SetConfigOptionAs(ctx, who, a.ConfigID, a.Value)
	case follow.OpClose:
		var a follow.CloseArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		if a.Delete {
			return s.DeleteAs(ctx, who, a.Reason)
		}
		return nil, s.CloseAs(who, a.Reason)
	case follow.OpShare, follow.OpUnshare:
		var a follow.ShareArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		var err error
		if cmd.Op == follow.OpUnshare {
			err = s.UnshareAs(who, a.With)
		} else {
			err = s.ShareAs(who, a.With, a.Role)
		}
		if err != nil {
			return nil, err
		}
		// The revision of the entry that holds the change: the caller's copy takes it at once and must
		// not take an older entry its watch still delivers.
		wctx, cancel := context.WithTimeout(ctx, store.RouteSlack)
		defer cancel()
		return follow.ShareResult{Rev: durableOf(s).DirRevision(wctx)}, nil
	case follow.OpAuthenticate:
		return s.Authenticate(ctx, cmd.Args)
	case follow.OpAttachMCP:
		servers, err := agents.ParseMCPServers(cmd.Args)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", sessionerr.ErrBadRequest, err)
		}
		return nil, s.AttachMCPAs(who, servers)
	case follow.OpRename:
		var a core.RenameArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		_, err := s.RenameAs(ctx, who, a.Title)
		return nil, err
	case follow.OpListFiles:
		var a FilesOptions
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		return s.ListFilesAs(ctx, who, a)
	}
	return nil, fmt.Errorf("%w: unknown command %q", sessionerr.ErrBadRequest, cmd.Op)
}

// serveCreate creates a session here for the node that received POST /v1/sessions {"node": this one}.
func (r *Registry) serveCreate(ctx context.Context, cmd store.Command) store.Reply {
	var a follow.CreateArgs
	if err := decodeArgs(cmd, &a); err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	opts := CreateOptions{Agent: a.Agent, Cwd: a.Cwd, AdditionalDirs: a.AdditionalDirs, PermissionPolicy: a.PermissionPolicy, Owner: cmd.Principal}
	if len(a.MCPServers) > 0 {
		var err error
		if opts.MCPServers, err = agents.ParseMCPServers(a.MCPServers); err != nil {
			return sessionerr.ReplyTo(nil, 0, fmt.Errorf("%w: %v", sessionerr.ErrBadRequest, err))
		}
	}
	s, err := r.Create(ctx, opts)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	return sessionerr.ReplyTo(follow.CreateResult{ID: s.ID, Status: s.Status()}, s.Log().Head(), nil)
}

func decodeArgs(cmd store.Command, v any) error {
	if err := json.Unmarshal(cmd.Args, v); err != nil {
		return fmt.Errorf("%w: command %s: %v", sessionerr.ErrBadRequest, cmd.Op, err)
	}
	return nil
}

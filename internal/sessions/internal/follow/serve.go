package follow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/store"
)

// ServeHost is what serving a routed command asks of the registry on the session's owner; the registry
// implements it with the same adapter as Host.
type ServeHost interface {
	// Owned is a session this node owns, hydrated; a follower is not one.
	Owned(id string) (*core.Session, error)
	// Create creates a session here for owner, as a create on this node would.
	Create(ctx context.Context, a CreateArgs, mcp []agents.MCPServer, owner principal.Principal) (*core.Session, error)
	// Fork forks src, a session this node owns, for who, as a fork on this node would.
	Fork(ctx context.Context, who principal.Principal, src *core.Session, a ForkArgs, mcp []agents.MCPServer) (*core.Session, error)
	// DirRevision waits (within ctx) until s's directory entry holds every change made so far and returns its
	// revision; 0 when it cannot tell, and in memory mode.
	DirRevision(ctx context.Context, s *core.Session) uint64
}

// Serve runs a command another node routed (Runner) to a session this node owns, with the same
// method and the same checks of who asked as a local face, and answers with the result and the log's head.
func Serve(ctx context.Context, h ServeHost, cmd store.Command) store.Reply {
	switch cmd.Op {
	case OpCreate:
		return serveCreate(ctx, h, cmd)
	case OpFork:
		return serveFork(ctx, h, cmd)
	}
	s, err := h.Owned(cmd.SID)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	res, err := runCommand(ctx, h, s, cmd)
	return sessionerr.ReplyTo(res, s.Log().Head(), err)
}

// runCommand runs cmd on s through the session's public methods, so who asked is checked as for a face of
// this node. It serves routed commands, not the local runner: the runner is what those methods call once
// they have checked.
func runCommand(ctx context.Context, h ServeHost, s *core.Session, cmd store.Command) (any, error) {
	who := cmd.Principal
	switch cmd.Op {
	case OpPrompt:
		var a PromptArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		t, replayed, err := s.PromptWith(ctx, who, a.Blocks, core.PromptOptions{TurnID: a.TurnID, IdempotencyKey: a.IdempotencyKey})
		if err != nil {
			return nil, err
		}
		return TurnResult{TurnID: t.ID, Replayed: replayed}, nil
	case OpCancel:
		id, err := s.CancelAs(ctx, who)
		return TurnResult{TurnID: id}, err
	case OpAnswer:
		var a AnswerArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		o, _, err := s.AnswerInTurnAs(who, a.PermissionID, a.Answer, a.By)
		return o, err
	case OpSetMode:
		var a SetModeArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		return nil, s.SetModeAs(ctx, who, a.ModeID)
	case OpSetConfig:
		var a SetConfigArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		return s.SetConfigOptionAs(ctx, who, a.ConfigID, a.Value)
	case OpClose:
		var a CloseArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		if a.Delete {
			return s.DeleteAs(ctx, who, a.Reason)
		}
		return nil, s.CloseAs(who, a.Reason)
	case OpShare, OpUnshare:
		var a ShareArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		var err error
		if cmd.Op == OpUnshare {
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
		return ShareResult{Rev: h.DirRevision(wctx, s)}, nil
	case OpAuthenticate:
		return s.Authenticate(ctx, cmd.Args)
	case OpAttachMCP:
		servers, err := agents.ParseMCPServers(cmd.Args)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", sessionerr.ErrBadRequest, err)
		}
		return nil, s.AttachMCPAs(who, servers)
	case OpRename:
		var a core.RenameArgs
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		_, err := s.RenameAs(ctx, who, a.Title)
		return nil, err
	case OpListFiles:
		var a services.FilesOptions
		if err := decodeArgs(cmd, &a); err != nil {
			return nil, err
		}
		return s.ListFilesAs(ctx, who, a)
	}
	return nil, fmt.Errorf("%w: unknown command %q", sessionerr.ErrBadRequest, cmd.Op)
}

// serveCreate creates a session here for the node that received POST /v1/sessions {"node": this one}.
func serveCreate(ctx context.Context, h ServeHost, cmd store.Command) store.Reply {
	var a CreateArgs
	if err := decodeArgs(cmd, &a); err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	mcp, err := parseMCP(a.MCPServers)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	s, err := h.Create(ctx, a, mcp, cmd.Principal)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	return sessionerr.ReplyTo(CreateResult{ID: s.ID, Status: s.Status()}, s.Log().Head(), nil)
}

// serveFork forks a session this node owns for the node that received the fork.
func serveFork(ctx context.Context, h ServeHost, cmd store.Command) store.Reply {
	var a ForkArgs
	if err := decodeArgs(cmd, &a); err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	mcp, err := parseMCP(a.MCPServers)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	src, err := h.Owned(cmd.SID)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	s, err := h.Fork(ctx, cmd.Principal, src, a, mcp)
	if err != nil {
		return sessionerr.ReplyTo(nil, 0, err)
	}
	return sessionerr.ReplyTo(CreateResult{ID: s.ID, Status: s.Status(), ForkedAt: s.ForkedAt()}, s.Log().Head(), nil)
}

// parseMCP is a routed create's or fork's MCP servers; none when raw is empty.
func parseMCP(raw json.RawMessage) ([]agents.MCPServer, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	servers, err := agents.ParseMCPServers(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", sessionerr.ErrBadRequest, err)
	}
	return servers, nil
}

func decodeArgs(cmd store.Command, v any) error {
	if err := json.Unmarshal(cmd.Args, v); err != nil {
		return fmt.Errorf("%w: command %s: %v", sessionerr.ErrBadRequest, cmd.Op, err)
	}
	return nil
}

package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/admit"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	acp "github.com/coder/acp-go-sdk"
)

// localRunner runs a session's actions on this node, which owns the session and its agent, and holds what
// they use besides the session: the registry and the store link.
type localRunner struct {
	s   *Session  // Static after construction.
	reg *Registry // Static after construction; the registry that holds s.
	// dur links the session to the store (package durable); nil in memory mode. Set before the session is shared.
	dur *durable.Link
}

func (r *localRunner) Prompt(ctx context.Context, who principal.Principal, blocks []json.RawMessage, opts PromptOptions, key promptkey.Key) (t *Turn, replayed bool, err error) {
	s := r.s
	c := core.ControlOf(s)
	c.Lock()
	// Looked up again where the turn starts: the same key may have started it meanwhile.
	if t, err = c.KeyedTurnLocked(key); t != nil || err != nil {
		c.Unlock()
		return t, t != nil, err
	}
	t, err = c.PromptHereLocked(ctx, who, blocks, opts.TurnID, key, func() (*Turn, error) {
		return r.reattachAndPrompt(ctx, who, blocks, opts.TurnID, key) // unlocks mu
	})
	return t, false, err
}

func (r *localRunner) Rename(_ context.Context, _ principal.Principal, title string) error {
	return core.ControlOf(r.s).LogTitle(title)
}

func (r *localRunner) ListFiles(_ context.Context, _ principal.Principal, opts FilesOptions) (agentsvc.ListResult, error) {
	return core.ControlOf(r.s).ListFilesHere(opts)
}

func (r *localRunner) Cancel(ctx context.Context, who principal.Principal) (string, error) {
	s := r.s
	if err := core.ControlOf(s).Allow(who, AccessAct); err != nil {
		return "", err
	}
	turnID, err := s.Cancel(ctx)
	if err == nil {
		core.ControlOf(s).Audit(who, "cancel", "turn", turnID)
	}
	return turnID, err
}

func (r *localRunner) Answer(who principal.Principal, requestID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error) {
	s := r.s
	if err := core.ControlOf(s).Allow(who, AccessAct); err != nil {
		return ask.Outcome{}, nil, err
	}
	return core.ControlOf(s).Answer(who, requestID, a, by)
}

func (r *localRunner) SetMode(ctx context.Context, who principal.Principal, modeID string) error {
	s := r.s
	if err := core.ControlOf(s).Allow(who, AccessOwn); err != nil {
		return err
	}
	err := s.SetMode(ctx, modeID)
	if err == nil {
		core.ControlOf(s).Audit(who, "set_mode", "mode", modeID)
	}
	return err
}

func (r *localRunner) SetConfig(ctx context.Context, who principal.Principal, configID string, value json.RawMessage) (json.RawMessage, error) {
	s := r.s
	if err := core.ControlOf(s).Allow(who, AccessOwn); err != nil {
		return nil, err
	}
	opts, err := s.SetConfigOption(ctx, configID, value)
	if err == nil {
		core.ControlOf(s).Audit(who, "set_config_option", "config", configID)
	}
	return opts, err
}

func (r *localRunner) Share(who principal.Principal, with string, role store.ShareRole) error {
	s := r.s
	c := core.ControlOf(s)
	c.SetShare(with, role)
	c.SharesChanged()
	c.NoteDir()
	if role == "" {
		c.Audit(who, "unshare", "with", with)
	} else {
		c.Audit(who, "share", "with", with, "role", string(role))
	}
	return nil
}

func (r *localRunner) AttachMCP(who principal.Principal, servers []agents.MCPServer) error {
	s := r.s
	if err := core.ControlOf(s).Allow(who, AccessOwn); err != nil {
		core.ControlOf(s).Lock()
		defer core.ControlOf(s).Unlock()
		if !r.hasMCP(servers) {
			return fmt.Errorf("%w: only the session's owner (or an admin) changes its MCP servers", err)
		}
		return nil
	}
	core.ControlOf(s).Lock()
	defer core.ControlOf(s).Unlock()
	if !core.ControlOf(s).DetachedAtRestLocked() {
		return r.checkSameMCP(servers)
	}
	spec := core.ControlOf(s).AgentSpec()
	client := make([]agents.MCPServer, 0, len(servers))
	for _, m := range servers {
		if c, ok := admit.FindMCP(spec.MCPServers, m.Name); ok {
			if !c.Equal(m) {
				return fmt.Errorf("%w: %q is configured for agent %q; choose another name", sessionerr.ErrMCPNameConflict, m.Name, spec.Name)
			}
			continue
		}
		client = append(client, m)
	}
	if err := r.reg.admit.CheckClientMCP(spec, client); err != nil {
		return err
	}
	if err := admit.CheckMCPTransports(core.ControlOf(s).AgentCapabilitiesLocked(), client); err != nil {
		return err
	}
	changed := core.ControlOf(s).SetClientMCPLocked(client)
	core.ControlOf(s).NoteDir() // the directory entry carries them: a restart (even after a kill -9) re-attaches with these
	if changed {
		core.ControlOf(s).Audit(who, "set_mcp_servers", "servers", mcpNames(client))
	}
	return nil
}

func (r *localRunner) Authenticate(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	s := r.s
	conn, err := core.ControlOf(s).Usable()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.reg.cfg.CallTimeout)
	defer cancel()
	res, err := conn.Call(ctx, acp.AgentMethodAuthenticate, params)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &sessionerr.AgentError{Op: "authenticate", Err: agentlink.CallError(ctx, err, r.reg.cfg.CallTimeout)}
		}
		return nil, &sessionerr.AgentError{Op: "authenticate", Err: err}
	}
	return res, nil
}

func (r *localRunner) Close(who principal.Principal, reason string) error {
	s := r.s
	if err := core.ControlOf(s).Allow(who, AccessOwn); err != nil {
		return err
	}
	core.ControlOf(s).Audit(who, "close", "reason", reason)
	s.Close(reason)
	return nil
}

func (r *localRunner) CloseHere(reason string) {
	s := r.s
	c := core.ControlOf(s)
	c.EndOnce(func() {
		conn, t, wasUsable, answers := c.BeginClose()
		pending.Deliver(answers)
		if t != nil && wasUsable {
			_ = conn.Notify(context.Background(), acp.AgentMethodSessionCancel, map[string]any{"sessionId": c.AgentSession()})
		}
		if conn != nil {
			// Wait a little for the agent's own answer to the cancel before stopping it.
			if t != nil {
				w := time.NewTimer(r.reg.cfg.StopGrace)
				select {
				case <-t.Done():
				case <-w.C:
				}
				w.Stop()
			}
			conn.Stop()
			if wasUsable {
				r.reg.cfg.Metrics.AgentExited(s.Agent, false)
			}
		}
		if t != nil {
			<-t.Done()
		}
		c.CloseTerminals()
		c.LogClosed(reason)
		c.FinishClose()
		r.reg.remove(s.ID)
		if r.dur != nil {
			r.dur.Remove()
		}
		c.SessionLogger().Info("session closed", "reason", reason)
	})
	<-s.Closed()
}

func (r *localRunner) DelegateFS(who principal.Principal, d FSDelegate) (release func()) {
	return core.ControlOf(r.s).AddFSDelegate(who, d)
}

// Hydrate loads a stored session's log on its first use; a memory-mode session is never cold.
func (r *localRunner) Hydrate() error {
	if r.dur == nil {
		return nil
	}
	return core.ControlOf(r.s).HydrateWith(r.dur.Load)
}

// CurrentEpoch is Epoch: this node writes the log, and Epoch is static once the session is shared.
func (r *localRunner) CurrentEpoch() string { return r.s.Epoch }

func (r *localRunner) EpochLocked() string { return r.s.Epoch }

// AwaitResume waits for nothing: this node's log is the session's, and a seq past its head is invalid.
func (*localRunner) AwaitResume(uint64, string) {}

// PlaceLocked: this node, and what the write-behind has stored in the store modes.
func (r *localRunner) PlaceLocked(v *View) {
	if r.dur != nil {
		d := r.dur.DurableSeq(v.LastSeq)
		v.DurableSeq = &d
	}
	if r.reg.cfg.Cluster != nil {
		v.Node = r.reg.cfg.NodeID
	}
}

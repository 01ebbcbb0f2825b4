package acpws

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// forkSession is ACP session/fork: a new registry session owned by the caller, from the agent's fork of the
// session (any the caller may act on, attached here or not) and its transcript so far. The client has the
// history already, so the new session streams from the first frame that is its own (what the agent sent
// after the fork), as session/new does.
func (c *conn) forkSession(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		SessionID      *string         `json:"sessionId"`
		Cwd            *string         `json:"cwd"`
		McpServers     json.RawMessage `json:"mcpServers"`
		AdditionalDirs []string        `json:"additionalDirectories"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	err := checkCwd(p.Cwd, true)
	if err == nil && (p.SessionID == nil || *p.SessionID == "") {
		err = badParams("sessionId is required")
	}
	var mcp []agents.MCPServer
	if err == nil {
		mcp, err = parseMcpServers(p.McpServers)
	}
	if err != nil {
		c.fail(id, err)
		return
	}
	who := principal.From(ctx)
	src, err := c.h.reg.GetAs(who, *p.SessionID)
	if err != nil {
		c.getFailed(id, *p.SessionID, err)
		return
	}
	dirs := p.AdditionalDirs
	if dirs == nil {
		dirs = []string{} // ACP: omitted means none, not the source's
	}
	s, err := c.h.reg.ForkAs(ctx, who, src, sessions.ForkOptions{Cwd: *p.Cwd, AdditionalDirs: dirs, MCPServers: mcp})
	if err != nil {
		c.fail(id, err)
		return
	}
	frame := rpcResult(id, sessionResult(s.View(), map[string]any{"sessionId": s.ID}))
	if err := c.subscribe(s); err != nil {
		c.fail(id, err)
		return
	}
	from := s.ForkedAt()
	c.send(func(w *writer) error {
		if err := w.write(frame); err != nil {
			return err
		}
		w.attach(s, from, from)
		return nil
	})
}

// deleteSession is ACP session/delete: the registry session is deleted (closed and removed everywhere, as
// session/close does) and the agent's copy too where the agent advertises session/delete.
func (c *conn) deleteSession(ctx context.Context, id, params json.RawMessage) {
	s := c.namedSession(ctx, id, params)
	if s == nil {
		return
	}
	d, err := s.DeleteAs(ctx, principal.From(ctx), "deleted by an ACP client")
	if err != nil {
		c.fail(id, err)
		return
	}
	c.replyAfterLog(s, rpcResult(id, map[string]any{"_meta": map[string]any{"gateway": map[string]any{"agentSession": d}}}))
}

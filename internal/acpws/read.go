package acpws

import (
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// Dispatch handles one client message: errors are queued at once, requests run on their own goroutine.
func (c *conn) Dispatch(data []byte) {
	var m jsonrpc.Message
	if err := json.Unmarshal(data, &m); err != nil {
		if !json.Valid(data) {
			c.reply(rpcError(jsonrpc.NullID, jsonrpc.ParseError, "Parse error", nil))
			return
		}
		c.reply(rpcError(jsonrpc.NullID, jsonrpc.InvalidRequest, "Invalid request: not a JSON-RPC message object", nil))
		return
	}
	id := m.ID
	if id != nil && !jsonrpc.ValidID(id) {
		c.reply(rpcError(jsonrpc.NullID, jsonrpc.InvalidRequest, "Invalid request: id must be a string, a number or null", nil))
		return
	}
	if id != nil {
		// Every reply echoes the id: it is re-encoded once here, never echoed as the client's raw bytes.
		id = rawjson.EchoID(id)
	}
	if m.JSONRPC != "2.0" {
		c.reply(rpcError(orNull(id), jsonrpc.InvalidRequest, `Invalid request: jsonrpc must be "2.0"`, nil))
		return
	}
	switch {
	case m.Method != nil && id != nil:
		c.request(id, *m.Method, m.Params)
	case m.Method != nil:
		c.notification(*m.Method, m.Params)
	case id != nil && (m.Result != nil || m.Error != nil):
		c.response(id, m.Result, m.Error)
	default:
		c.reply(rpcError(orNull(id), jsonrpc.InvalidRequest, "Invalid request: neither a request, a notification nor a response", nil))
	}
}

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return jsonrpc.NullID
	}
	return id
}

// request runs a request on its own goroutine within the socket's budget; over budget it is refused at once.
func (c *conn) request(id json.RawMessage, method string, params json.RawMessage) {
	h, ok := c.methods()[method]
	if !ok {
		c.reply(rpcError(id, jsonrpc.MethodNotFound, "Method not found", map[string]any{"method": truncate(method, 128)}))
		return
	}
	select {
	case c.inflight <- struct{}{}:
	default:
		c.reply(rpcError(id, jsonrpc.Internal, "too many requests in flight on this connection", nil))
		return
	}
	ctx, end := c.beginRequest(id)
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		defer func() { <-c.inflight }()
		defer end()
		h(c, ctx, id, params)
	}()
}

// notification handles a client notification. Only session/cancel and `$/cancel_request` (cancelreq.go) mean
// something; the rest are ignored, as ACP asks of unknown notifications.
func (c *conn) notification(method string, params json.RawMessage) {
	if method == "$/cancel_request" {
		c.cancelRequest(params)
		return
	}
	if method != "session/cancel" {
		return
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s := c.AttachedSession(p.SessionID)
	if s == nil {
		return
	}
	cancel := func() {
		if _, err := s.CancelAs(c.ctx, principal.From(c.ctx)); err != nil && !errors.Is(err, sessionerr.ErrNoTurn) {
			c.h.opts.Logger.Debug("acp: session/cancel", "session", s.ID, "err", err)
		}
	}
	select {
	case c.inflight <- struct{}{}:
		c.work.Add(1)
		go func() {
			defer c.work.Done()
			defer func() { <-c.inflight }()
			cancel()
		}()
	default:
		cancel() // a cancel is never dropped; it only sends one notification to the agent
	}
}

// response applies the client's answer to a request this socket sent: an fs/* request (a numeric id it
// minted) or a forwarded permission or elicitation request (its id is the gateway's request id). Late answers and answers
// for requests another client resolved are ignored.
func (c *conn) response(id, result, rpcErr json.RawMessage) {
	if c.deliverReply(id, result, rpcErr) {
		return
	}
	var pid string
	if json.Unmarshal(id, &pid) != nil {
		return
	}
	c.noteAnswered(pid)
	var ans ask.ClientAnswer
	if rpcErr != nil && string(rpcErr) != "null" {
		ans = ask.FailedAnswer() // a client that fails the request denies (declines) it
	} else if err := json.Unmarshal(result, &ans); err != nil {
		ans = ask.ClientAnswer{} // malformed: Answer rejects it and the request stays pending
	}
	ans.For = "" // the request's id says what it is
	for _, s := range c.attachedList() {
		_, err := s.AnswerAs(principal.From(c.ctx), pid, ans, "acp")
		if errors.Is(err, sessionerr.ErrPermissionUnknown) {
			continue
		}
		if err != nil {
			c.h.opts.Logger.Debug("acp: permission answer not applied", "session", s.ID, "permission", pid, "err", err)
			if !errors.Is(err, sessionerr.ErrAlreadyResolved) {
				c.takeAnswered(pid) // still pending: a later resolution by someone else is withdrawn as usual
			}
		}
		return
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// rpcError encodes a JSON-RPC error response.
func rpcError(id json.RawMessage, code int, msg string, data any) []byte {
	return frameout.RPCError(id, code, msg, data)
}

// rpcResult encodes a JSON-RPC result response.
func rpcResult(id json.RawMessage, result any) []byte { return frameout.RPCResult(id, result) }

package acpws

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
	acp "github.com/coder/acp-go-sdk"
)

// A client that advertised `clientCapabilities.fs` (or `terminal`) in initialize serves the agents' fs/*
// (terminal/*) requests of the sessions it attaches while its principal may act on them
// (sessions.Session.DelegateFS): the request goes to the client on this socket with an
// id the socket mints (a JSON number; permission requests use string ids), and its response goes back to the
// agent. A method the client did not advertise is served by the gateway (Session.ServeFSLocally,
// Session.ServeTerminalLocally).

// fsCaps is what a client advertised in `clientCapabilities.fs`.
type fsCaps struct {
	Read  bool `json:"readTextFile"`
	Write bool `json:"writeTextFile"`
}

func (f fsCaps) any() bool { return f.Read || f.Write }

// clientCall is a request this socket sent to its client, waiting for the answer.
type clientCall struct {
	reply chan clientReply // buffered 1; the reader delivers without blocking
	sent  bool             // the writer has written the request (a withdrawal is then worth sending)
}

// clientReply is the client's JSON-RPC response: error when not null, else result.
type clientReply struct {
	result json.RawMessage
	err    json.RawMessage
}

// fsDelegate serves one session's fs/* requests through this socket.
type fsDelegate struct {
	c       *conn
	s       *sessions.Session
	release func() // Guarded by c.mu; from Session.DelegateFS while registered.
}

func (d *fsDelegate) ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	return d.serve(ctx, acp.ClientMethodFsReadTextFile, params)
}

func (d *fsDelegate) WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	return d.serve(ctx, acp.ClientMethodFsWriteTextFile, params)
}

// Terminal serves the session's terminal/* through the client when it advertised `terminal: true`, else
// the gateway runs the terminal (sessions.TerminalDelegate).
func (d *fsDelegate) Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	c := d.c
	c.mu.Lock()
	can := c.terminal
	c.mu.Unlock()
	if !can || c.ctx.Err() != nil {
		return d.s.ServeTerminalLocally(ctx, method, params)
	}
	return c.callClient(ctx, d.s, method, params)
}

func (d *fsDelegate) serve(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	c := d.c
	c.mu.Lock()
	caps := c.fs
	c.mu.Unlock()
	can := caps.Read && method == acp.ClientMethodFsReadTextFile || caps.Write && method == acp.ClientMethodFsWriteTextFile
	if !can || c.ctx.Err() != nil {
		// Not advertised, or the socket is ending (its delegation is about to be released): the gateway serves.
		return d.s.ServeFSLocally(ctx, method, params)
	}
	return c.callClient(ctx, d.s, method, params)
}

// delegateFSLocked offers this socket to serve the fs/* and terminal/* of sub's session when the client
// advertised either (again at every attach: the latest offer wins). The session uses it only while the
// socket's principal may act on the session: a viewer's socket is never asked. Called with c.mu held.
func (c *conn) delegateFSLocked(sub *subscription) {
	if !c.fs.any() && !c.terminal {
		return
	}
	if sub.fsd == nil {
		sub.fsd = &fsDelegate{c: c, s: sub.s}
	}
	old := sub.fsd.release
	sub.fsd.release = sub.s.DelegateFS(principal.From(c.ctx), sub.fsd)
	if old != nil {
		old() // the earlier offer, replaced by this one: changes nothing
	}
}

// releaseFSLocked withdraws sub's offer, if any: the socket attached before it, or the gateway, serves.
// Called with c.mu held.
func (c *conn) releaseFSLocked(sub *subscription) {
	if sub.fsd != nil {
		if sub.fsd.release != nil {
			sub.fsd.release()
		}
		sub.fsd = nil
	}
}

// releaseAllFS ends every fs delegation of this socket (it is closing).
func (c *conn) releaseAllFS() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sub := range c.attached {
		c.releaseFSLocked(sub)
	}
}

func fsError(msg string) *acp.RequestError {
	return acp.NewInternalError(map[string]any{"error": msg})
}

// callClient sends a request to the client and waits for its answer, at most Options.FSTimeout (except
// terminal/wait_for_exit) and no longer than the socket or ctx (the agent's request) lives. The request is written after the updates s's log
// holds now, as a stdio agent's request follows the updates it sent before it.
func (c *conn) callClient(ctx context.Context, s *sessions.Session, method string, params json.RawMessage) (any, *acp.RequestError) {
	call := &clientCall{reply: make(chan clientReply, 1)}
	c.mu.Lock()
	c.nextCall++
	n := c.nextCall
	c.calls[n] = call
	c.mu.Unlock()
	withdraw := false
	defer func() { c.abandon(s, n, withdraw) }()

	frame, err := frameout.Request(n, method, params)
	if err != nil {
		return nil, fsError("cannot encode the request for the client")
	}
	timer := time.NewTimer(c.h.opts.FSTimeout)
	defer timer.Stop()
	expired := timer.C
	if method == acp.ClientMethodTerminalWaitForExit {
		expired = nil // a command may rightly run for long; the agent's request and the socket still bound it
	}
	_, head := s.Log().Bounds()
	send := func(w *writer) error {
		c.mu.Lock()
		live := c.calls[n] == call
		if live {
			call.sent = true
		}
		c.mu.Unlock()
		if !live {
			return nil // given up before it was written
		}
		if a := w.atts[s.ID]; a != nil && a.s == s {
			if err := w.flush(a, head); err != nil {
				return err
			}
		}
		return w.writeFor(s.ID, frame)
	}
	select {
	case c.out <- send:
	case <-c.ctx.Done():
		return nil, fsError("the ACP client disconnected")
	case <-ctx.Done():
		return nil, acp.NewRequestCancelled(nil)
	case <-expired:
		return nil, fsError("the ACP client did not answer in time")
	}
	select {
	case r := <-call.reply:
		return decodeReply(method, r)
	case <-c.ctx.Done():
		return nil, fsError("the ACP client disconnected")
	case <-ctx.Done():
		withdraw = true
		return nil, acp.NewRequestCancelled(nil)
	case <-expired:
		withdraw = true
		return nil, fsError("the ACP client did not answer in time")
	}
}

// abandon forgets call n; withdraw sends ACP's `$/cancel_request` when the client was sent the request and
// has not answered. A late answer is ignored.
func (c *conn) abandon(s *sessions.Session, n uint64, withdraw bool) {
	c.mu.Lock()
	call := c.calls[n]
	delete(c.calls, n)
	c.mu.Unlock()
	if !withdraw || call == nil || !call.sent {
		return
	}
	b, _ := frameout.Notification("$/cancel_request", map[string]any{"requestId": n})
	select {
	case c.out <- func(w *writer) error { return w.writeFor(s.ID, b) }:
	default: // advisory; a writer this far behind is about to be closed anyway
	}
}

// deliverReply hands a client response to the call waiting for it. It reports whether the id is one this
// socket mints for its own requests (a number); such a response with no call waiting is late and ignored.
func (c *conn) deliverReply(id, result, rpcErr json.RawMessage) bool {
	var n uint64
	if json.Unmarshal(id, &n) != nil {
		return false
	}
	c.mu.Lock()
	call := c.calls[n]
	delete(c.calls, n)
	c.mu.Unlock()
	if call == nil {
		c.h.opts.Logger.Debug("acp: late or unknown client response ignored", "id", n)
		return true
	}
	call.reply <- clientReply{result: result, err: rpcErr} // buffered 1, and the call is gone: never blocks
	return true
}

// decodeReply turns the client's response into the answer for the agent: its error as it is, its result
// (a JSON object; null is {}) byte for byte.
func decodeReply(method string, r clientReply) (any, *acp.RequestError) {
	if len(r.err) > 0 && string(r.err) != "null" {
		var e struct {
			Code    *int            `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(r.err, &e) != nil || e.Code == nil {
			return nil, fsError("the ACP client answered with a malformed error")
		}
		re := &acp.RequestError{Code: *e.Code, Message: e.Message}
		if len(e.Data) > 0 && string(e.Data) != "null" {
			re.Data = e.Data
		}
		return nil, re
	}
	res := bytes.TrimSpace(r.result)
	if len(res) == 0 || string(res) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if res[0] != '{' {
		return nil, fsError("the ACP client answered " + method + " with a result that is not an object")
	}
	return json.RawMessage(res), nil
}

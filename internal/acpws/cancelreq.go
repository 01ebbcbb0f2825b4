package acpws

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// ACP's `$/cancel_request {requestId}` from the client cancels one of its requests in progress: the request's
// context ends, so what it waits for at the agent (session/set_mode, session/set_config_option, authenticate,
// a start) is cancelled there too (the SDK sends the agent `$/cancel_request` for it), and the request is
// answered -32800. A session/prompt's turn is cancelled as by session/cancel, and the prompt is answered with
// the turn's stopReason (cancelled), as ACP answers a cancelled turn. Unknown and finished ids are ignored.

// errCancelRequested is the cause of a request context the client cancelled.
var errCancelRequested = errors.New("the client cancelled the request ($/cancel_request)")

// codeRequestCancelled is JSON-RPC's (LSP's) "request cancelled".
const codeRequestCancelled = -32800

// clientRequest is a client request in progress.
type clientRequest struct {
	cancel    context.CancelCauseFunc
	cancelled bool // Guarded by conn.mu.
}

// beginRequest gives the request id its own context, which `$/cancel_request` may end; end forgets it.
func (c *conn) beginRequest(id json.RawMessage) (ctx context.Context, end func()) {
	ctx, cancel := context.WithCancelCause(c.ctx)
	r := &clientRequest{cancel: cancel}
	key := string(id)
	c.mu.Lock()
	if c.requests == nil {
		c.requests = map[string]*clientRequest{}
	}
	c.requests[key] = r
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		if c.requests[key] == r {
			delete(c.requests, key)
		}
		c.mu.Unlock()
		cancel(nil)
	}
}

// cancelRequest handles the client's `$/cancel_request`.
func (c *conn) cancelRequest(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !jsonrpc.ValidID(p.RequestID) {
		return
	}
	key := string(rawjson.EchoID(p.RequestID))
	c.mu.Lock()
	r := c.requests[key]
	if r != nil {
		r.cancelled = true
	}
	c.mu.Unlock()
	if r != nil {
		r.cancel(errCancelRequested)
	}
}

// cancelledByClient reports whether the client cancelled the request id still in progress.
func (c *conn) cancelledByClient(id json.RawMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.requests[string(id)]
	return r != nil && r.cancelled
}

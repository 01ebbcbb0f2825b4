package ws

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	// codeAlreadyResolved answers a permission response that lost the race (or came too late).
	codeAlreadyResolved = -32010
	codeUnknownRequest  = -32011
	codeForbidden       = -32003 // a viewer answering a permission request (docs/security.md)
)

// clientMessage is any JSON-RPC message a client sends.
type clientMessage struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id"`
	Method  string           `json:"method"`
	Result  json.RawMessage  `json:"result"`
	Error   json.RawMessage  `json:"error"`
}

// readLoop is the connection's only reader. Clients answer permission requests here; everything else gets a
// JSON-RPC error. Bad input never kills the socket short of a binary frame (1003), a text frame that is not
// UTF-8 (1007) or an oversized one (1009); a frame the inbound budget has no room for closes it with 1013.
func (cl *client) readLoop(ctx context.Context) error {
	for {
		f, err := cl.h.opts.Inbound.Read(ctx, cl.c, cl.h.opts.ReadLimit)
		if err != nil {
			// On ErrMessageTooBig the library has already closed the socket with 1009.
			return inbound.CloseError(err)
		}
		reply := cl.handleMessage(f.Data)
		f.Release()
		if reply != nil {
			select {
			case cl.replies <- reply:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// permissionAnswer is a decoded client response to a permission request.
type permissionAnswer struct {
	rawID  *json.RawMessage
	id     string
	answer ask.ClientAnswer
}

// decodeClientMessage classifies one client frame. It returns either a permission answer to apply, or the
// JSON-RPC reply to send (nil for notifications, which are ignored as ACP asks). Pure, for fuzzing.
func decodeClientMessage(data []byte) (*permissionAnswer, []byte) {
	var m clientMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, rpcError(nil, codeParseError, "parse error: not a JSON object")
	}
	switch {
	case m.Method != "" && m.ID != nil:
		return nil, rpcError(m.ID, codeMethodNotFound, "method not found on this socket: "+truncate(m.Method, 64))
	case m.Method != "":
		return nil, nil
	case m.ID == nil:
		return nil, rpcError(nil, codeInvalidRequest, "invalid request: neither a method nor a response id")
	}
	pa := &permissionAnswer{rawID: m.ID}
	if err := json.Unmarshal(*m.ID, &pa.id); err != nil {
		return nil, rpcError(m.ID, codeUnknownRequest, "no request with this id is pending")
	}
	if len(m.Error) > 0 {
		// A client that rejects the request with an error denies it (declines an elicitation).
		pa.answer = ask.FailedAnswer()
	} else if err := json.Unmarshal(m.Result, &pa.answer); err != nil {
		return nil, rpcError(m.ID, codeInvalidParams, `result must be {"outcome":{"outcome":"selected","optionId":…}} or {"outcome":{"outcome":"cancelled"}} (a permission), or {"action":"accept"|"decline"|"cancel","content":{…}} (an elicitation)`)
	}
	pa.answer.For = "" // the request's id says what it is
	return pa, nil
}

// handleMessage applies one client message and returns the reply to send, if any.
func (cl *client) handleMessage(data []byte) []byte {
	pa, reply := decodeClientMessage(data)
	if pa == nil {
		return reply
	}
	_, err := cl.s.AnswerAs(cl.who, pa.id, pa.answer, "client")
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sessionerr.ErrAlreadyResolved):
		return rpcError(pa.rawID, codeAlreadyResolved, "request already resolved")
	case errors.Is(err, sessionerr.ErrPermissionUnknown):
		return rpcError(pa.rawID, codeUnknownRequest, "no request with this id is pending")
	case errors.Is(err, sessionerr.ErrForbidden):
		return rpcError(pa.rawID, codeForbidden, "a viewer may not answer permission requests or elicitations")
	case errors.Is(err, sessionerr.ErrUnknownOption):
		return rpcError(pa.rawID, codeInvalidParams, "optionId was not offered by the agent; the request stays pending")
	case errors.Is(err, sessionerr.ErrInvalidElicitationAnswer):
		return rpcError(pa.rawID, codeInvalidParams, truncate(err.Error(), 400)+"; the request stays pending")
	default:
		return rpcError(pa.rawID, codeInvalidParams, "invalid permission answer")
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// rpcError encodes a JSON-RPC error reply. The client's id is re-encoded (rawjson.EchoID), never echoed raw.
func rpcError(id *json.RawMessage, code int, msg string) []byte {
	var raw json.RawMessage
	if id != nil {
		raw = rawjson.EchoID(*id)
	}
	return frameout.RPCError(raw, code, msg, nil)
}

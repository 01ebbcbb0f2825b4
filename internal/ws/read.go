package ws

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/coder/websocket"
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
)

// inbound is any JSON-RPC message a client sends.
type inbound struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id"`
	Method  string           `json:"method"`
	Result  json.RawMessage  `json:"result"`
	Error   json.RawMessage  `json:"error"`
}

// readLoop is the connection's only reader. Clients answer permission requests here; everything else gets a
// JSON-RPC error. Bad input never kills the socket short of a binary frame (1003) or an oversized one (1009).
func (cl *client) readLoop(ctx context.Context) error {
	for {
		typ, data, err := cl.c.Read(ctx)
		if err != nil {
			// On ErrMessageTooBig the library has already closed the socket with 1009.
			return err
		}
		if typ != websocket.MessageText {
			return &closeErr{CodeUnsupported, reasonBinary}
		}
		if reply := cl.handleMessage(data); reply != nil {
			select {
			case cl.replies <- reply:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// handleMessage applies one client message and returns the reply to send, if any.
func (cl *client) handleMessage(data []byte) []byte {
	var m inbound
	if err := json.Unmarshal(data, &m); err != nil {
		return rpcError(nil, codeParseError, "parse error: not a JSON object")
	}
	switch {
	case m.Method != "" && m.ID != nil:
		return rpcError(m.ID, codeMethodNotFound, "method not found on this socket: "+truncate(m.Method, 64))
	case m.Method != "":
		return nil // notifications we do not know are ignored, as ACP asks
	case m.ID == nil:
		return rpcError(nil, codeInvalidRequest, "invalid request: neither a method nor a response id")
	}
	var id string
	if err := json.Unmarshal(*m.ID, &id); err != nil {
		return rpcError(m.ID, codeUnknownRequest, "no request with this id is pending")
	}
	var ans translate.ClientAnswer
	if len(m.Error) > 0 {
		// A client that rejects the request with an error denies it.
		ans.Outcome.Outcome = "cancelled"
	} else if err := json.Unmarshal(m.Result, &ans); err != nil {
		return rpcError(m.ID, codeInvalidParams, "result must be {\"outcome\":{\"outcome\":\"selected\",\"optionId\":…}} or {\"outcome\":{\"outcome\":\"cancelled\"}}")
	}
	_, err := cl.s.Answer(id, ans, "client")
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sessions.ErrAlreadyResolved):
		return rpcError(m.ID, codeAlreadyResolved, "permission request already resolved")
	case errors.Is(err, sessions.ErrPermissionUnknown):
		return rpcError(m.ID, codeUnknownRequest, "no request with this id is pending")
	case errors.Is(err, sessions.ErrUnknownOption):
		return rpcError(m.ID, codeInvalidParams, "optionId was not offered by the agent; the request stays pending")
	default:
		return rpcError(m.ID, codeInvalidParams, "invalid permission answer")
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func rpcError(id *json.RawMessage, code int, msg string) []byte {
	var rawID json.RawMessage = json.RawMessage("null")
	if id != nil {
		rawID = *id
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rawID, "error": map[string]any{"code": code, "message": msg}})
	return b
}

package acphttp

import (
	"bytes"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
)

// postMessage is what the Streamable HTTP face reads from a POST body before the connection dispatches it:
// enough to route it. The connection's own dispatch validates the rest (and answers -32600 and friends on
// the stream, as over a WebSocket).
type postMessage struct {
	id            json.RawMessage // nil when absent
	method        string          // "" when absent or not a string
	paramsSession string          // params.sessionId when it is a string
	initialize    bool            // a JSON-RPC 2.0 `initialize` request with an id: it opens a connection
}

func (m postMessage) isRequest() bool { return m.method != "" && m.id != nil && string(m.id) != "null" }

// postError is a body the face refuses with 400 and a JSON-RPC error response (id null), as the
// official server answers a batch: nothing in it is processed.
type postError struct {
	code int
	msg  string
}

// parsePost reads one POST body: a single JSON-RPC message object. Invalid JSON is -32700; a batch (ACP
// has none), a value that is not an object, or an `initialize` that is not a request with an id that can be
// answered is -32600.
func parsePost(body []byte) (postMessage, *postError) {
	if !json.Valid(body) {
		return postMessage{}, &postError{jsonrpc.ParseError, "Parse error"}
	}
	t := bytes.Trim(body, " \t\r\n") // JSON's whitespace only: json.Valid accepted no other
	switch t[0] {
	case '[':
		return postMessage{}, &postError{jsonrpc.InvalidRequest, "Invalid request: JSON-RPC batches are not supported"}
	case '{':
	default:
		return postMessage{}, &postError{jsonrpc.InvalidRequest, "Invalid request: not a JSON-RPC message object"}
	}
	// Read as Conn.Dispatch reads it (jsonrpc.Message), so the face routes only what it answers with this id: a
	// message whose members it cannot decode, or whose id is not a string or a number, is answered with id null.
	var msg jsonrpc.Message
	if json.Unmarshal(t, &msg) != nil {
		return postMessage{}, nil // answered -32600 (id null) on the connection stream
	}
	var m postMessage
	if msg.ID != nil && jsonrpc.ValidID(msg.ID) {
		m.id = msg.ID
	}
	if msg.Method != nil {
		m.method = *msg.Method
	}
	var p struct {
		SessionID json.RawMessage `json:"sessionId"`
	}
	if len(msg.Params) > 0 && msg.Params[0] == '{' && json.Unmarshal(msg.Params, &p) == nil {
		_ = json.Unmarshal(p.SessionID, &m.paramsSession)
	}
	if m.method == "initialize" && (msg.JSONRPC != "2.0" || !m.isRequest()) {
		return postMessage{}, &postError{jsonrpc.InvalidRequest, `Invalid request: initialize is a JSON-RPC 2.0 request whose id is a string or a number`}
	}
	m.initialize = m.method == "initialize"
	return m, nil
}

// sessionScoped are the methods whose POST must name their session in Acp-Session-Id (the official
// transport's list).
var sessionScoped = map[string]bool{
	"session/cancel": true, "session/close": true, "session/delete": true, "session/fork": true,
	"session/load": true, "session/prompt": true, "session/resume": true, "session/set_config_option": true,
	"session/set_mode": true, "session/set_model": true,
}

// needsAttachment are the methods that act on a session attached to the connection: over Streamable HTTP,
// one not attached is a 409 (re-attach with session/load or session/resume), which the official client
// understands as such.
var needsAttachment = map[string]bool{
	"session/prompt": true, "session/cancel": true, "session/set_mode": true, "session/set_config_option": true,
}

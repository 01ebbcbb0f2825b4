// Package jsonrpc is what both `/acp` transports read of a client's JSON-RPC 2.0 message, and the JSON-RPC
// error codes they answer with, so the Streamable HTTP face routes a POST exactly as the connection reads it.
package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// Message is any JSON-RPC message a client sends. A member that is absent stays nil; `"id": null` is the
// raw bytes `null`.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// NullID is the id of an answer to a message whose id could not be read.
var NullID = json.RawMessage("null")

// ValidID reports whether id is a string, a number or null, the ids JSON-RPC allows.
func ValidID(id json.RawMessage) bool {
	switch t := bytes.TrimSpace(id); {
	case len(t) == 0:
		return false
	case t[0] == '"', t[0] == '-', t[0] >= '0' && t[0] <= '9':
		return true
	default:
		return string(t) == "null"
	}
}

// JSON-RPC error codes (ACP ErrorCode).
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InvalidParams  = -32602
	Internal       = -32603
	NotFound       = -32002 // ACP "resource not found"
	Forbidden      = -32003 // the caller's share of the session does not allow the request (docs/security.md)
)

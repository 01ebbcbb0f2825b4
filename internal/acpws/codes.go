package acpws

import "github.com/coder/websocket"

// Close codes (DESIGN.md). Reasons are short constants, never error text.
const (
	codeGoingAway  = websocket.StatusGoingAway       // 1001: gateway shutting down
	codeSlowClient = websocket.StatusCode(4001)      // evicted; reconnect and session/load
	codeRevoked    = websocket.StatusPolicyViolation // 1008: the credentials were revoked (users-file reload) or expired
)

const (
	reasonShutdown  = "gateway shutting down"
	reasonSlow      = "client too slow"
	reasonTruncated = "log truncated; reload"
)

// JSON-RPC error codes (ACP ErrorCode).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeNotFound       = -32002 // ACP "resource not found"
	codeForbidden      = -32003 // the caller's share of the session does not allow the request (docs/security.md)
)

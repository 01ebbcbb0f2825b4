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

package ws

import "github.com/coder/websocket"

// Close codes (DESIGN.md). Reasons are short constants, never error text.
const (
	CodeNormal        = websocket.StatusNormalClosure           // 1000
	CodeGoingAway     = websocket.StatusGoingAway               // 1001: gateway shutting down; reconnect with after
	CodeUnsupported   = websocket.StatusUnsupportedData         // 1003: binary frame
	CodeInvalidData   = websocket.StatusInvalidFramePayloadData // 1007: a text frame that is not UTF-8
	CodePolicy        = websocket.StatusPolicyViolation         // 1008: bad origin / auth; do not retry
	CodeTooBig        = websocket.StatusMessageTooBig           // 1009
	CodeInternal      = websocket.StatusInternalError           // 1011
	CodeMoved         = websocket.StatusServiceRestart          // 1012: the session moved to another node; reconnect with after
	CodeTryAgain      = websocket.StatusTryAgainLater           // 1013: inbound budget exhausted; retry later
	CodeSlowClient    = websocket.StatusCode(4001)              // evicted; reconnect with after
	CodeNotFound      = websocket.StatusCode(4004)              // session not found; do not retry
	CodeSessionClosed = websocket.StatusCode(4009)              // session closed; do not retry
)

// Subprotocol is the application subprotocol of the session stream.
const Subprotocol = "acp-gateway.v1"

const (
	reasonShutdown = "gateway shutting down"
	reasonSlow     = "client too slow"
	reasonNotFound = "session not found"
	reasonClosed   = "session closed"
	reasonMoved    = "session moved"
)

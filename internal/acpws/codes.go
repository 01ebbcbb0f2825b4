package acpws

import "github.com/coder/websocket"

// Close codes (DESIGN.md). Reasons are short constants, never error text.
const (
	codeGoingAway   = websocket.StatusGoingAway               // 1001: gateway shutting down
	codeUnsupported = websocket.StatusUnsupportedData         // 1003: binary frame
	codeInvalidData = websocket.StatusInvalidFramePayloadData // 1007: a text frame that is not UTF-8
	codeTooBig      = websocket.StatusMessageTooBig           // 1009: frame over Options.ReadLimit
	codeTryAgain    = websocket.StatusTryAgainLater           // 1013: inbound budget exhausted; retry later
	codeSlowClient  = websocket.StatusCode(4001)              // evicted; reconnect and session/load
)

const (
	reasonShutdown    = "gateway shutting down"
	reasonSlow        = "client too slow"
	reasonBinary      = "binary frames not supported"
	reasonInvalidUTF8 = "text frame is not valid UTF-8"
	reasonBusy        = "gateway busy; try again later"
	reasonTooBig      = "frame too big"
	reasonTruncated   = "log truncated; reload"
)

// JSON-RPC error codes (ACP ErrorCode).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeNotFound       = -32002 // ACP "resource not found"
)

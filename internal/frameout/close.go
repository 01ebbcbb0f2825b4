package frameout

import "github.com/coder/websocket"

// CloseError ends a WebSocket connection with a close code. Reasons are short constants, never error text.
type CloseError struct {
	Code   websocket.StatusCode
	Reason string
}

func (e *CloseError) Error() string { return e.Reason }

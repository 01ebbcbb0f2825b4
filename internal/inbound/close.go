package inbound

import (
	"errors"

	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/coder/websocket"
)

// Close reasons of refused frames: short constants, never error text.
const (
	reasonBinary      = "binary frames not supported"
	reasonInvalidUTF8 = "text frame is not valid UTF-8"
	reasonBusy        = "gateway busy; try again later"
	reasonTooBig      = "frame too big"
)

// CloseError maps an error of Read to the close that says why the frame was refused (1003, 1007, 1009 or
// 1013); other errors (the connection's own) are returned as they are. Both socket faces use it.
func CloseError(err error) error {
	switch {
	case errors.Is(err, ErrBinary):
		return &frameout.CloseError{Code: websocket.StatusUnsupportedData, Reason: reasonBinary}
	case errors.Is(err, ErrInvalidUTF8):
		return &frameout.CloseError{Code: websocket.StatusInvalidFramePayloadData, Reason: reasonInvalidUTF8}
	case errors.Is(err, ErrTooBig):
		return &frameout.CloseError{Code: websocket.StatusMessageTooBig, Reason: reasonTooBig}
	case errors.Is(err, ErrBusy):
		return &frameout.CloseError{Code: websocket.StatusTryAgainLater, Reason: reasonBusy}
	default:
		return err
	}
}

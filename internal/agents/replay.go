package agents

import (
	"context"
	"encoding/json"
	"math"

	acp "github.com/coder/acp-go-sdk"
)

// CallDroppingUpdates sends a request during which the agent replays what the gateway already has (the
// history of a session it loads): every session/update the agent sends before its response is dropped
// before the Handler sees it, and every one after it is handled as usual. The cut follows wire order
// exactly, because the SDK fixes it on its reading goroutine when it reads the response (not when this
// call returns). After an error response, or none, the agent's updates stay dropped: the caller stops it.
// One such call at a time per connection.
func (c *Conn) CallDroppingUpdates(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.dropUpdatesThrough.Store(math.MaxUint64)
	ctx = acp.WithResponseWatermark(ctx, func(before uint64, isError bool) {
		if !isError {
			c.dropUpdatesThrough.Store(before)
		}
	})
	return c.Call(ctx, method, params)
}

// dropsUpdate reports whether the session/update being handled is replay to drop (CallDroppingUpdates).
// It runs where the SDK handles notifications (its reading goroutine).
func (c *Conn) dropsUpdate() bool {
	d := c.dropUpdatesThrough.Load()
	return d != 0 && c.rpc.HandlingNotification() <= d
}

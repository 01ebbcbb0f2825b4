package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	acp "github.com/coder/acp-go-sdk"
)

// The gateway is the agents' ACP client, so it serves fs/read_text_file and fs/write_text_file: through a
// delegate client that may serve them (fs_delegate.go), or itself, confined to the session's cwd
// (agentsvc.Workspace). A write is logged as `_gateway/fs_write` so clients can audit what an agent changed
// through the gateway.

// clientParams rewrites the agent's session id in fs params to the gateway's, for a delegate. The params go
// to a WebSocket client as a text frame, so invalid UTF-8 from the agent (raw JSON keeps it) is replaced.
func (s *Session) clientParams(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return rawjson.ValidUTF8(params)
	}
	m["sessionId"], _ = json.Marshal(s.ID)
	out, _ := json.Marshal(m)
	return rawjson.ValidUTF8(out)
}

// ReadTextFile implements agents.FSHandler: the delegate's answer, or the gateway's own (fs_local.go).
func (s *Session) ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	done, rerr := s.fsSlot()
	if rerr != nil {
		return nil, rerr
	}
	defer done()
	return s.serveDelegated(ctx, func(ctx context.Context, d FSDelegate) (any, *acp.RequestError, bool) {
		res, rerr := d.ReadTextFile(ctx, s.clientParams(params))
		return res, rerr, true
	}, func() (any, *acp.RequestError) { return s.readLocal(params) })
}

// WriteTextFile implements agents.FSHandler: the delegate's answer, or the gateway's own (fs_local.go).
func (s *Session) WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	done, rerr := s.fsSlot()
	if rerr != nil {
		return nil, rerr
	}
	defer done()
	return s.serveDelegated(ctx, func(ctx context.Context, d FSDelegate) (any, *acp.RequestError, bool) {
		res, rerr := d.WriteTextFile(ctx, s.clientParams(params))
		return res, rerr, true
	}, func() (any, *acp.RequestError) { return s.writeLocal(params) })
}

// fsSlot takes one of the session's fs/* slots (Config.MaxFSRequests) until done is called. A request past
// them is refused at once, not queued: each one in flight holds a goroutine and a read buffer, and one whose
// open waits on the kernel an OS thread, so an agent that sends thousands at once must not get them all.
func (s *Session) fsSlot() (done func(), rerr *acp.RequestError) {
	select {
	case s.fsSlots <- struct{}{}:
		return func() { <-s.fsSlots }, nil
	default:
		return nil, acp.NewInternalError(map[string]any{"error": fmt.Sprintf(
			"the session already has %d fs requests in flight, its limit; send more once they are answered", cap(s.fsSlots))})
	}
}

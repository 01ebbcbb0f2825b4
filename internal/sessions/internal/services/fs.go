package services

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	acp "github.com/coder/acp-go-sdk"
)

// The gateway is the agents' ACP client, so it serves fs/read_text_file and fs/write_text_file: through a
// delegate client that may serve them (delegate.go), or itself, confined to the session's cwd
// (agentsvc.Workspace). A write is logged as `_gateway/fs_write` so clients can audit what an agent changed
// through the gateway.

// ClientParams rewrites the agent's session id in fs params to the gateway's id, for a delegate. The params
// go to a WebSocket client as a text frame, so invalid UTF-8 from the agent (raw JSON keeps it) is replaced.
func ClientParams(id string, params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return rawjson.ValidUTF8(params)
	}
	m["sessionId"], _ = json.Marshal(id)
	out, _ := json.Marshal(m)
	return rawjson.ValidUTF8(out)
}

// ReadTextFile serves the agent's fs/read_text_file: the delegate's answer, or the gateway's own.
func (sv *Services) ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	done, rerr := sv.fsSlot()
	if rerr != nil {
		return nil, rerr
	}
	defer done()
	return sv.serveDelegated(ctx, func(ctx context.Context, d FSDelegate) (any, *acp.RequestError, bool) {
		res, rerr := d.ReadTextFile(ctx, ClientParams(sv.id, params))
		return res, rerr, true
	}, func() (any, *acp.RequestError) { return sv.readLocal(params) })
}

// WriteTextFile serves the agent's fs/write_text_file: the delegate's answer, or the gateway's own.
func (sv *Services) WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	done, rerr := sv.fsSlot()
	if rerr != nil {
		return nil, rerr
	}
	defer done()
	return sv.serveDelegated(ctx, func(ctx context.Context, d FSDelegate) (any, *acp.RequestError, bool) {
		res, rerr := d.WriteTextFile(ctx, ClientParams(sv.id, params))
		return res, rerr, true
	}, func() (any, *acp.RequestError) { return sv.writeLocal(params) })
}

// fsSlot takes one of the session's fs/* slots (Config.MaxFSRequests) until done is called. A request past
// them is refused at once, not queued: each one in flight holds a goroutine and a read buffer, and one whose
// open waits on the kernel an OS thread, so an agent that sends thousands at once must not get them all.
func (sv *Services) fsSlot() (done func(), rerr *acp.RequestError) {
	select {
	case sv.fsSlots <- struct{}{}:
		return func() { <-sv.fsSlots }, nil
	default:
		return nil, acp.NewInternalError(map[string]any{"error": fmt.Sprintf(
			"the session already has %d fs requests in flight, its limit; send more once they are answered", cap(sv.fsSlots))})
	}
}

// ServeFSLocally serves an agent's fs/* request (method acp.ClientMethodFsReadTextFile or
// acp.ClientMethodFsWriteTextFile) the way the gateway does when no delegate is registered: confined to the
// session's cwd (agentsvc.Workspace), a write logged as `_gateway/fs_write`. It never consults the delegate,
// so a delegate that does not serve a method itself (an `/acp` client that advertised readTextFile but not
// writeTextFile) returns this for it. Any other method is -32601.
func (sv *Services) ServeFSLocally(_ context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.ClientMethodFsReadTextFile:
		return sv.readLocal(params)
	case acp.ClientMethodFsWriteTextFile:
		return sv.writeLocal(params)
	}
	return nil, acp.NewMethodNotFound(method)
}

func (sv *Services) readLocal(params json.RawMessage) (any, *acp.RequestError) {
	return sv.workspace.Read(params)
}

// writeLocal writes the file and logs `_gateway/fs_write`, so clients can audit what an agent changed
// through the gateway.
func (sv *Services) writeLocal(params json.RawMessage) (any, *acp.RequestError) {
	w, rerr := sv.workspace.Write(params)
	if rerr != nil {
		return nil, rerr
	}
	sv.s.LogInTurn("_gateway/fs_write", map[string]any{"path": w.Path, "bytes": w.Bytes})
	return map[string]any{}, nil
}

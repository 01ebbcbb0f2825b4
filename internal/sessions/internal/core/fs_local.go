package core

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
)

// ServeFSLocally serves an agent's fs/* request (method acp.ClientMethodFsReadTextFile or
// acp.ClientMethodFsWriteTextFile) the way the gateway does when no delegate is registered: confined to the
// session's cwd (agentsvc.Workspace), a write logged as `_gateway/fs_write`. It never consults the delegate,
// so a delegate that does not serve a method itself (an `/acp` client that advertised readTextFile but not
// writeTextFile) returns this for it. Any other method is -32601.
func (s *Session) ServeFSLocally(_ context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.ClientMethodFsReadTextFile:
		return s.readLocal(params)
	case acp.ClientMethodFsWriteTextFile:
		return s.writeLocal(params)
	}
	return nil, acp.NewMethodNotFound(method)
}

func (s *Session) readLocal(params json.RawMessage) (any, *acp.RequestError) {
	return s.workspace.Read(params)
}

// writeLocal writes the file and logs `_gateway/fs_write`, so clients can audit what an agent changed
// through the gateway.
func (s *Session) writeLocal(params json.RawMessage) (any, *acp.RequestError) {
	w, rerr := s.workspace.Write(params)
	if rerr != nil {
		return nil, rerr
	}
	s.mu.Lock()
	turnID := ""
	if s.turn != nil {
		turnID = s.turn.ID
	}
	s.appendGatewayLocked("_gateway/fs_write", turnID, map[string]any{"path": w.Path, "bytes": w.Bytes})
	s.mu.Unlock()
	return map[string]any{}, nil
}

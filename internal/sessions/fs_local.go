package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	acp "github.com/coder/acp-go-sdk"
)

// ServeFSLocally serves an agent's fs/* request (method acp.ClientMethodFsReadTextFile or
// acp.ClientMethodFsWriteTextFile) the way the gateway does when no delegate is registered: confined to the
// session's cwd, a write logged as `_gateway/fs_write`. It never consults the delegate, so a delegate that
// does not serve a method itself (an `/acp` client that advertised readTextFile but not writeTextFile)
// returns this for it. Any other method is -32601.
// ReadTextFile and WriteTextFile use the same code when no delegate is registered.
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
	var req readFileRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "malformed fs/read_text_file params"})
	}
	path, rerr := s.confinePath(req.Path, false)
	if rerr != nil {
		return nil, rerr
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, resourceNotFound(req.Path)
	case err != nil:
		return nil, acp.NewInternalError(map[string]any{"error": "cannot stat the file"})
	case fi.IsDir():
		return nil, acp.NewInvalidParams(map[string]any{"error": "path is a directory"})
	case fi.Size() > maxFSRead && req.Line == nil && req.Limit == nil:
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("file is larger than %d bytes; read it in parts with line and limit", maxFSRead)})
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": "cannot read the file"})
	}
	content, ok := selectLines(data, req.Line, req.Limit)
	if !ok {
		return nil, acp.NewInvalidParams(map[string]any{"error": "line must be >= 1 and limit >= 0"})
	}
	if len(content) > maxFSRead {
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("selection is larger than %d bytes", maxFSRead)})
	}
	return map[string]string{"content": string(content)}, nil
}

func (s *Session) writeLocal(params json.RawMessage) (any, *acp.RequestError) {
	var req writeFileRequest
	if err := json.Unmarshal(params, &req); err != nil || req.Content == nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "fs/write_text_file needs path and content"})
	}
	path, rerr := s.confinePath(req.Path, true)
	if rerr != nil {
		return nil, rerr
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil, acp.NewInvalidParams(map[string]any{"error": "path is a directory"})
		}
		mode = fi.Mode().Perm()
	}
	if err := os.WriteFile(path, []byte(*req.Content), mode); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": "cannot write the file"})
	}
	s.mu.Lock()
	turnID := ""
	if s.turn != nil {
		turnID = s.turn.ID
	}
	s.appendGatewayLocked("_gateway/fs_write", turnID, map[string]any{"path": path, "bytes": len(*req.Content)})
	s.mu.Unlock()
	return map[string]any{}, nil
}

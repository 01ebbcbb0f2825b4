package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	base, rel, rerr := s.confinePath(req.Path)
	if rerr != nil {
		return nil, rerr
	}
	f, err := s.openInCwd(base, rel, os.O_RDONLY)
	if err != nil {
		return nil, fsError(err, req.Path, false)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, acp.NewInternalError(map[string]any{"error": "cannot stat the file"})
	case fi.IsDir():
		return nil, acp.NewInvalidParams(map[string]any{"error": "path is a directory"})
	case fi.Size() > maxFSRead && req.Line == nil && req.Limit == nil:
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("file is larger than %d bytes; read it in parts with line and limit", maxFSRead)})
	}
	data, err := io.ReadAll(f)
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

// writeLocal creates or truncates the file (an existing file keeps its mode) through os.Root, so a symlink on
// the path, dangling or not, is followed only inside the cwd.
func (s *Session) writeLocal(params json.RawMessage) (any, *acp.RequestError) {
	var req writeFileRequest
	if err := json.Unmarshal(params, &req); err != nil || req.Content == nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "fs/write_text_file needs path and content"})
	}
	base, rel, rerr := s.confinePath(req.Path)
	if rerr != nil {
		return nil, rerr
	}
	f, err := s.openInCwd(base, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return nil, fsError(err, req.Path, true)
	}
	_, err = io.WriteString(f, *req.Content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": "cannot write the file"})
	}
	path := filepath.Join(base, rel)
	s.mu.Lock()
	turnID := ""
	if s.turn != nil {
		turnID = s.turn.ID
	}
	s.appendGatewayLocked("_gateway/fs_write", turnID, map[string]any{"path": path, "bytes": len(*req.Content)})
	s.mu.Unlock()
	return map[string]any{}, nil
}

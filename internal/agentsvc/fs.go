package agentsvc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	acp "github.com/coder/acp-go-sdk"
)

type readFileRequest struct {
	Path  string `json:"path"`
	Line  *int   `json:"line"`
	Limit *int   `json:"limit"`
}

type writeFileRequest struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// Read answers fs/read_text_file: the whole file or the lines asked for, within the bounds of fs_lines.go.
func (w *Workspace) Read(params json.RawMessage) (any, *acp.RequestError) {
	var req readFileRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "malformed fs/read_text_file params"})
	}
	if req.Line != nil && *req.Line < 1 || req.Limit != nil && *req.Limit < 0 {
		return nil, acp.NewInvalidParams(map[string]any{"error": "line must be >= 1 and limit >= 0"})
	}
	base, rel, rerr := w.confine(req.Path)
	if rerr != nil {
		return nil, rerr
	}
	f, fi, rerr := w.openRegular(base, rel, req.Path, os.O_RDONLY, false)
	if rerr != nil {
		return nil, rerr
	}
	defer f.Close()
	whole := req.Line == nil && req.Limit == nil
	if whole && fi.Size() > maxFSRead {
		return nil, readBoundErr(errFileTooLarge)
	}
	content, err := readSelection(f, req.Line, req.Limit, fsBounds)
	if err == nil && jsonStringLen(content) > maxFSWire {
		err = errWireTooLarge
	}
	if err != nil {
		return nil, readBoundErr(err)
	}
	return map[string]string{"content": string(content)}, nil
}

// readBoundErr is the agent's answer to a read that failed, or went past its bounds (fs_lines.go).
func readBoundErr(err error) *acp.RequestError {
	var msg string
	switch {
	case errors.Is(err, errFileTooLarge):
		msg = fmt.Sprintf("file is larger than %d bytes; read it in parts with line and limit", maxFSRead)
	case errors.Is(err, errSelectionTooLarge):
		msg = fmt.Sprintf("selection is larger than %d bytes", maxFSRead)
	case errors.Is(err, errWireTooLarge):
		msg = fmt.Sprintf("selection is larger than %d bytes once encoded as JSON (control characters and <, >, & take 6 bytes each); read it in smaller parts", maxFSWire)
	case errors.Is(err, errScanBound):
		msg = fmt.Sprintf("selection ends more than %d bytes into the file, past what a read looks through", maxFSScan)
	default:
		return acp.NewInternalError(map[string]any{"error": "cannot read the file"})
	}
	return acp.NewInvalidParams(map[string]any{"error": msg})
}

// Written is what a write changed, for the session to log.
type Written struct {
	Path  string
	Bytes int
}

// Write answers fs/write_text_file: it creates or overwrites the file (an existing file keeps its mode)
// through os.Root, so a symlink on the path, dangling or not, is followed only inside the cwd. A file with
// more than one hard link is refused before anything changes: writing it in place would change every name
// it has, and the others may lie outside the cwd (replacing it instead would leave them as they are, but
// change what the agent's own name is: a new inode, owner and mode). So it is opened without O_TRUNC and
// truncated once checked.
func (w *Workspace) Write(params json.RawMessage) (Written, *acp.RequestError) {
	var req writeFileRequest
	if err := json.Unmarshal(params, &req); err != nil || req.Content == nil {
		return Written{}, acp.NewInvalidParams(map[string]any{"error": "fs/write_text_file needs path and content"})
	}
	base, rel, rerr := w.confine(req.Path)
	if rerr != nil {
		return Written{}, rerr
	}
	f, fi, rerr := w.openRegular(base, rel, req.Path, os.O_WRONLY|os.O_CREATE, true)
	if rerr != nil {
		return Written{}, rerr
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink > 1 {
		_ = f.Close()
		return Written{}, acp.NewInvalidParams(map[string]any{"error": "the file has other hard links, which may lie outside the session's working directory; the gateway does not write through them"})
	}
	err := f.Truncate(0)
	if err == nil {
		_, err = io.WriteString(f, *req.Content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Written{}, acp.NewInternalError(map[string]any{"error": "cannot write the file"})
	}
	return Written{Path: filepath.Join(base, rel), Bytes: len(*req.Content)}, nil
}

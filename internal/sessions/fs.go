package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/acp-gateway/gateway/internal/translate"
	acp "github.com/coder/acp-go-sdk"
)

// maxFSRead bounds what fs/read_text_file returns: the answer must fit on one JSON-RPC line the agent's SDK
// accepts (acp-go-sdk allows 10 MiB), with room for JSON escaping.
const maxFSRead = 4 << 20

// The gateway is the agents' ACP client, so it serves fs/read_text_file and fs/write_text_file itself, confined
// to the session's cwd: the path must be absolute, lie inside the cwd, and every symlink on it must resolve inside
// the cwd too (os.Root enforces it on the open itself). A write is logged as `_gateway/fs_write` so clients can audit what an agent changed through the gateway.

type readFileRequest struct {
	Path  string `json:"path"`
	Line  *int   `json:"line"`
	Limit *int   `json:"limit"`
}

type writeFileRequest struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// FSDelegate serves an agent's fs/* requests for a session instead of the gateway: an ACP client attached over
// `/acp` that advertised fs capabilities (an editor with unsaved buffers knows better than the disk). Params
// carry the gateway's session id.
type FSDelegate interface {
	ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
	WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
}

// DelegateFS routes the session's fs/* requests to d while it is registered; release unregisters it (only if
// it is still the current delegate). The latest registration wins. Requests that find no delegate are served
// by the gateway itself, confined to the cwd.
func (s *Session) DelegateFS(d FSDelegate) (release func()) {
	if s.remote != nil {
		return func() {} // the owner serves its agent's fs/* itself; a client on another node is never asked
	}
	s.mu.Lock()
	s.fsDelegate = &d
	mine := s.fsDelegate
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.fsDelegate == mine {
			s.fsDelegate = nil
		}
		s.mu.Unlock()
	}
}

func (s *Session) delegate() FSDelegate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fsDelegate == nil {
		return nil
	}
	return *s.fsDelegate
}

// clientParams rewrites the agent's session id in fs params to the gateway's, for a delegate. The params go
// to a WebSocket client as a text frame, so invalid UTF-8 from the agent (raw JSON keeps it) is replaced.
func (s *Session) clientParams(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return translate.ValidUTF8(params)
	}
	m["sessionId"], _ = json.Marshal(s.ID)
	out, _ := json.Marshal(m)
	return translate.ValidUTF8(out)
}

// ReadTextFile implements agents.FSHandler: the delegate's answer, or the gateway's own (fs_local.go).
func (s *Session) ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	if d := s.delegate(); d != nil {
		return d.ReadTextFile(ctx, s.clientParams(params))
	}
	return s.readLocal(params)
}

// WriteTextFile implements agents.FSHandler: the delegate's answer, or the gateway's own (fs_local.go).
func (s *Session) WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	if d := s.delegate(); d != nil {
		return d.WriteTextFile(ctx, s.clientParams(params))
	}
	return s.writeLocal(params)
}

// confinePath checks an agent's path lexically and returns it relative to the session cwd, with the cwd it is
// relative to (s.Cwd, or s.Cwd with its own symlinks resolved, for agents that resolved it). Symlinks inside the
// cwd are left to os.Root (openInCwd): checking them here and opening later would let a link be swapped in
// between, and a link that does not resolve yet (a dangling one) would be followed by the write.
func (s *Session) confinePath(p string) (base, rel string, rerr *acp.RequestError) {
	if p == "" || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return "", "", acp.NewInvalidParams(map[string]any{"error": "path must be absolute"})
	}
	clean := filepath.Clean(p)
	if within(s.Cwd, clean) {
		rel, _ := filepath.Rel(s.Cwd, clean)
		return s.Cwd, rel, nil
	}
	if real, err := filepath.EvalSymlinks(s.Cwd); err == nil && within(real, clean) {
		rel, _ := filepath.Rel(real, clean)
		return real, rel, nil
	}
	return "", "", outsideErr()
}

// openInCwd opens rel inside the cwd through os.Root: every component is opened relative to the one before it
// and a symlink is followed only while it stays inside, so nothing can lead out between the check and the use.
// The session's root, opened when it was made or re-attached, is used when there is one: swapping the cwd's own
// path for a link later changes nothing.
func (s *Session) openInCwd(base, rel string, flag int) (*os.File, error) {
	root, closed := s.root.get()
	if closed {
		return nil, errCwdGone
	}
	if root != nil {
		f, err := root.OpenFile(rel, flag, 0o644)
		if errors.Is(err, os.ErrClosed) {
			return nil, errCwdGone
		}
		return f, err
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, errCwdGone
	}
	defer root.Close()
	return root.OpenFile(rel, flag, 0o644)
}

var errCwdGone = errors.New("session cwd is gone")

// fsError maps an os.Root error to the agent's answer. os.Root's "path escapes" error is not exported; it is the
// only one that carries no errno, so that is what marks a path (or a symlink on it) that leads out.
func fsError(err error, path string, forWrite bool) *acp.RequestError {
	var errno syscall.Errno
	switch {
	case errors.Is(err, errCwdGone):
		return acp.NewInternalError(map[string]any{"error": "session cwd is gone"})
	case errors.Is(err, fs.ErrNotExist) && forWrite:
		return acp.NewInvalidParams(map[string]any{"error": "the file's directory does not exist"})
	case errors.Is(err, fs.ErrNotExist):
		return resourceNotFound(path)
	case errors.Is(err, syscall.EISDIR):
		return acp.NewInvalidParams(map[string]any{"error": "path is a directory"})
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENAMETOOLONG):
		return acp.NewInvalidParams(map[string]any{"error": "cannot resolve path"})
	case !errors.As(err, &errno):
		return outsideErr()
	}
	return acp.NewInternalError(map[string]any{"error": "cannot open the file"})
}

// resourceNotFound is ACP's -32002.
func resourceNotFound(path string) *acp.RequestError {
	return &acp.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"path": path}}
}

func outsideErr() *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": "path is outside the session's working directory"})
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// selectLines returns limit lines starting at line (1-based); nil line/limit mean from the start / to the end.
func selectLines(data []byte, line, limit *int) ([]byte, bool) {
	if line == nil && limit == nil {
		return data, true
	}
	start := 1
	if line != nil {
		start = *line
	}
	if start < 1 || limit != nil && *limit < 0 {
		return nil, false
	}
	for i := 1; i < start; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil, true
		}
		data = data[j+1:]
	}
	if limit == nil {
		return data, true
	}
	end := 0
	for n := 0; n < *limit && end < len(data); n++ {
		j := bytes.IndexByte(data[end:], '\n')
		if j < 0 {
			end = len(data)
			break
		}
		end += j + 1
	}
	return data[:end], true
}

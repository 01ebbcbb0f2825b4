package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/acp-gateway/gateway/internal/translate"
	acp "github.com/coder/acp-go-sdk"
)

// The gateway is the agents' ACP client, so it serves fs/read_text_file and fs/write_text_file itself, confined
// to the session's cwd: the path must be absolute, lie inside the cwd, and every symlink on it must resolve inside
// the cwd too (os.Root enforces it on the open itself). Only regular files are served, opened without blocking
// (a FIFO's open would wait for a writer forever), and a write never goes to a file with other hard links
// (they may lie outside the cwd). A write is logged as `_gateway/fs_write` so clients can audit what an agent
// changed through the gateway.

type readFileRequest struct {
	Path  string `json:"path"`
	Line  *int   `json:"line"`
	Limit *int   `json:"limit"`
}

type writeFileRequest struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
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

// openRegular opens rel inside the cwd (openInCwd) without blocking and returns it only when it is a regular
// file: the open of a FIFO would otherwise wait for its other end, holding an OS thread for as long (and
// O_NOCTTY keeps a terminal from becoming the gateway's). What it is comes from the opened descriptor, so
// nothing can be swapped in after the check.
func (s *Session) openRegular(base, rel, path string, flag int, forWrite bool) (*os.File, fs.FileInfo, *acp.RequestError) {
	f, err := s.openInCwd(base, rel, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY)
	if err != nil {
		return nil, nil, fsError(err, path, forWrite)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		_ = f.Close()
		return nil, nil, acp.NewInternalError(map[string]any{"error": "cannot stat the file"})
	case fi.IsDir():
		_ = f.Close()
		return nil, nil, acp.NewInvalidParams(map[string]any{"error": "path is a directory"})
	case !fi.Mode().IsRegular():
		_ = f.Close()
		return nil, nil, notRegular()
	}
	return f, fi, nil
}

func notRegular() *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": "path is not a regular file (a FIFO, socket or device)"})
}

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
	case errors.Is(err, syscall.ENXIO):
		return notRegular() // a FIFO opened for writing with no reader, or a socket
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

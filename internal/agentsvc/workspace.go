package agentsvc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	acp "github.com/coder/acp-go-sdk"
)

// Workspace is a session's working directory as the agent's files are served from it: the path must be
// absolute, lie inside the cwd, and every symlink on it must resolve inside the cwd too (os.Root enforces it
// on the open itself). Only regular files are served, opened without blocking (a FIFO's open would wait for a
// writer forever).
type Workspace struct {
	Cwd  string // Static after construction.
	root cwdRoot
}

// NewWorkspace serves cwd. With open it opens cwd's root at once; otherwise (a restored session) it has
// none until Reopen, and opens the path for each request meanwhile.
func NewWorkspace(cwd string, open bool) *Workspace {
	w := &Workspace{Cwd: cwd}
	if open {
		if root, err := os.OpenRoot(cwd); err == nil {
			w.root.replace(root)
		}
	}
	return w
}

// Reopen makes root the directory served, closing the one before. After Close it closes root and reports
// false.
func (w *Workspace) Reopen(root *os.Root) bool { return w.root.replace(root) }

// Close releases the cwd's descriptor for good; requests after it fail as "cwd gone".
func (w *Workspace) Close() { w.root.close() }

// confine checks an agent's path lexically and returns it relative to the cwd, with the cwd it is relative
// to (Cwd, or Cwd with its own symlinks resolved, for agents that resolved it). Symlinks inside the cwd are
// left to os.Root (openInCwd): checking them here and opening later would let a link be swapped in between,
// and a link that does not resolve yet (a dangling one) would be followed by the write.
func (w *Workspace) confine(p string) (base, rel string, rerr *acp.RequestError) {
	if p == "" || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return "", "", acp.NewInvalidParams(map[string]any{"error": "path must be absolute"})
	}
	clean := filepath.Clean(p)
	if Within(w.Cwd, clean) {
		rel, _ := filepath.Rel(w.Cwd, clean)
		return w.Cwd, rel, nil
	}
	if real, err := filepath.EvalSymlinks(w.Cwd); err == nil && Within(real, clean) {
		rel, _ := filepath.Rel(real, clean)
		return real, rel, nil
	}
	return "", "", outsideErr()
}

// openInCwd opens rel inside the cwd through os.Root: every component is opened relative to the one before it
// and a symlink is followed only while it stays inside, so nothing can lead out between the check and the use.
// The workspace's root is used when there is one: swapping the cwd's own path for a link later changes nothing.
func (w *Workspace) openInCwd(base, rel string, flag int) (*os.File, error) {
	root, closed := w.root.get()
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
func (w *Workspace) openRegular(base, rel, path string, flag int, forWrite bool) (*os.File, fs.FileInfo, *acp.RequestError) {
	f, err := w.openInCwd(base, rel, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY)
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

// Dir resolves a command's cwd inside the workspace (nil or empty = the cwd itself): absolute, and with its
// symlinks resolved still inside, and a directory.
func (w *Workspace) Dir(cwd *string) (string, *acp.RequestError) {
	if cwd == nil || *cwd == "" {
		return w.Cwd, nil
	}
	base, rel, rerr := w.confine(*cwd)
	if rerr != nil {
		return "", rerr
	}
	real, err := filepath.EvalSymlinks(filepath.Join(base, rel))
	if err != nil {
		return "", acp.NewInvalidParams(map[string]any{"error": "cwd does not exist"})
	}
	root, err := filepath.EvalSymlinks(w.Cwd)
	if err != nil || !Within(root, real) {
		return "", outsideErr()
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", acp.NewInvalidParams(map[string]any{"error": "cwd is not a directory"})
	}
	return real, nil
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

// Within reports whether p lies in root (or is root); both are clean absolute paths.
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

package agentsvc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/acp-gateway/gateway/internal/agenterr"
)

// The directories a person may pick as a new session's cwd (GET /v1/workspace/dirs): the workspace roots, and
// the directories under one of them, one level at a time. A listing goes through os.Root opened at the root,
// so neither `..` nor a symlink leads out; only real directories are listed (no symlinks, no hidden ones, not
// .git or node_modules), and nothing but directories is opened.

// Bounds of one directory listing, and of the path an error quotes back.
const (
	maxDirsScanned = 5000
	maxDirsListed  = 500
	maxPathEcho    = 256
)

// DirEntry is one directory a picker offers.
type DirEntry struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

// DirList is the roots, and the directories under Path when one was asked for.
type DirList struct {
	Roots     []string   `json:"roots"`
	Default   string     `json:"default"`
	Path      string     `json:"path,omitempty"`
	Parent    string     `json:"parent,omitempty"` // "" at a root
	Dirs      []DirEntry `json:"dirs"`
	Truncated bool       `json:"truncated"`
}

// resolvedRoots are roots (none: workdir) with their symlinks resolved (the ones that exist).
func resolvedRoots(roots []string, workdir string) []string {
	if len(roots) == 0 {
		roots = []string{workdir}
	}
	var out []string
	for _, root := range roots {
		if rr, err := filepath.EvalSymlinks(root); err == nil && !slices.Contains(out, rr) {
			out = append(out, rr)
		}
	}
	return out
}

// DirError is a listing refused: Outside when the path leads outside the workspace roots, else a path
// that is not a readable directory. The session core reports it with its own error codes.
type DirError struct {
	Outside bool
	msg     string
}

func (e *DirError) Error() string { return e.msg }

func outsideRoots(format string, args ...any) error {
	return &DirError{Outside: true, msg: fmt.Sprintf(format, args...)}
}

func badDir(format string, args ...any) error {
	return &DirError{msg: fmt.Sprintf(format, args...)}
}

// ListDirs lists the directories under path, which must lie inside one of roots (none: workdir; "" = the
// roots themselves). A refusal is a *DirError.
func ListDirs(roots []string, workdir, path string) (DirList, error) {
	roots = resolvedRoots(roots, workdir)
	res := DirList{Roots: roots, Default: workdir, Dirs: []DirEntry{}}
	if real, err := filepath.EvalSymlinks(workdir); err == nil {
		res.Default = real // resolved as the roots are, so that it lists (and is the cwd a session shows)
	}
	if res.Roots == nil {
		res.Roots = []string{}
	}
	if path == "" {
		for _, rr := range roots {
			res.Dirs = append(res.Dirs, DirEntry{Path: rr, Name: rr})
		}
		return res, nil
	}
	if !filepath.IsAbs(path) || strings.IndexByte(path, 0) >= 0 {
		return res, badDir("path must be absolute")
	}
	path = filepath.Clean(path)
	base := ""
	for _, rr := range roots {
		if Within(rr, path) && len(rr) > len(base) {
			base = rr
		}
	}
	if base == "" {
		return res, outsideRoots("%q is outside the workspace roots", agenterr.Clip(path, maxPathEcho))
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return res, badDir("the workspace root cannot be opened")
	}
	defer root.Close()
	rel, _ := filepath.Rel(base, path)
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) && !errors.Is(err, fs.ErrNotExist) {
			return res, outsideRoots("%q leads outside the workspace roots", agenterr.Clip(path, maxPathEcho))
		}
		return res, badDir("%q is not a directory", agenterr.Clip(path, maxPathEcho))
	}
	defer f.Close()
	entries, err := f.ReadDir(maxDirsScanned)
	if err != nil && !errors.Is(err, io.EOF) {
		return res, badDir("%q cannot be read", agenterr.Clip(path, maxPathEcho))
	}
	res.Truncated = len(entries) == maxDirsScanned
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || slices.Contains(SkippedDirs, name) {
			continue
		}
		res.Dirs = append(res.Dirs, DirEntry{Path: filepath.Join(path, name), Name: name})
	}
	slices.SortFunc(res.Dirs, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	if len(res.Dirs) > maxDirsListed {
		res.Dirs, res.Truncated = res.Dirs[:maxDirsListed], true
	}
	res.Path = path
	if path != base {
		res.Parent = filepath.Dir(path)
	}
	return res, nil
}

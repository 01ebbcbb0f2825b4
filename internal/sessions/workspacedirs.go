package sessions

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

	"github.com/acp-gateway/gateway/internal/agentsvc"
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

// workspaceRoots are the roots with their symlinks resolved (the ones that exist).
func (r *Registry) workspaceRoots() []string {
	roots := r.cfg.WorkspaceRoots
	if len(roots) == 0 {
		roots = []string{r.cfg.Workdir}
	}
	var out []string
	for _, root := range roots {
		if rr, err := filepath.EvalSymlinks(root); err == nil && !slices.Contains(out, rr) {
			out = append(out, rr)
		}
	}
	return out
}

// WorkspaceDirs lists the directories under path, which must lie inside a workspace root ("" = the roots).
func (r *Registry) WorkspaceDirs(path string) (DirList, error) {
	roots := r.workspaceRoots()
	res := DirList{Roots: roots, Default: r.cfg.Workdir, Dirs: []DirEntry{}}
	if real, err := filepath.EvalSymlinks(r.cfg.Workdir); err == nil {
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
		return res, fmt.Errorf("%w: path must be absolute", ErrBadRequest)
	}
	path = filepath.Clean(path)
	base := ""
	for _, rr := range roots {
		if agentsvc.Within(rr, path) && len(rr) > len(base) {
			base = rr
		}
	}
	if base == "" {
		return res, fmt.Errorf("%w: %q is outside the workspace roots", ErrForbiddenCwd, clip(path, maxPathEcho))
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return res, fmt.Errorf("%w: the workspace root cannot be opened", ErrBadRequest)
	}
	defer root.Close()
	rel, _ := filepath.Rel(base, path)
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("%w: %q leads outside the workspace roots", ErrForbiddenCwd, clip(path, maxPathEcho))
		}
		return res, fmt.Errorf("%w: %q is not a directory", ErrBadRequest, clip(path, maxPathEcho))
	}
	defer f.Close()
	entries, err := f.ReadDir(maxDirsScanned)
	if err != nil && !errors.Is(err, io.EOF) {
		return res, fmt.Errorf("%w: %q cannot be read", ErrBadRequest, clip(path, maxPathEcho))
	}
	res.Truncated = len(entries) == maxDirsScanned
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || slices.Contains(agentsvc.SkippedDirs, name) {
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

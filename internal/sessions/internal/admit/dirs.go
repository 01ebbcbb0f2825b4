package admit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
)

// Confine resolves cwd (following symlinks) and checks it lies inside a workspace root, so neither `..` nor
// a symlink can point an agent at a directory the operator did not offer.
func (p *Policy) Confine(cwd string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	if err != nil {
		return "", fmt.Errorf("%w: cwd %q does not exist", sessionerr.ErrBadRequest, cwd)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: cwd %q is not a directory", sessionerr.ErrBadRequest, cwd)
	}
	roots := p.Roots
	if len(roots) == 0 {
		roots = []string{p.Workdir}
	}
	for _, root := range roots {
		rr, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(rr, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%w: cwd %q is outside the workspace roots", sessionerr.ErrForbiddenCwd, cwd)
}

// A session's additionalDirectories (ACP): more workspace roots for the agent besides its cwd. Each is confined
// by the workspace roots exactly as the cwd is, granted to a confined agent as its cwd is (read and write), and
// checked again against today's roots before a re-attach passes them to the agent again.

// MaxAdditionalDirs bounds how many a session may name.
const MaxAdditionalDirs = 32

// ConfineDirs resolves and confines each directory as Confine does a cwd, in order, without duplicates (nor
// the cwd itself).
func (p *Policy) ConfineDirs(cwd string, dirs []string) ([]string, error) {
	if len(dirs) > MaxAdditionalDirs {
		return nil, fmt.Errorf("%w: at most %d additionalDirectories", sessionerr.ErrBadRequest, MaxAdditionalDirs)
	}
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%w: additionalDirectories: %q must be an absolute path", sessionerr.ErrBadRequest, d)
		}
		real, err := p.Confine(d)
		if err != nil {
			return nil, fmt.Errorf("additionalDirectories: %w", err)
		}
		if real != cwd && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// RecheckDirs checks stored additionalDirectories against today's workspace roots: each must still resolve to
// itself (no symlink swapped in on its path) inside them.
func (p *Policy) RecheckDirs(dirs []string) error {
	for _, d := range dirs {
		real, err := p.Confine(d)
		if err != nil {
			return fmt.Errorf("additionalDirectories: %w", err)
		}
		if real != filepath.Clean(d) {
			return fmt.Errorf("%w: additionalDirectories: %q now resolves to %q (a symlink on its path)", sessionerr.ErrForbiddenCwd, d, real)
		}
	}
	return nil
}

// CheckAdditionalDirs refuses additionalDirectories for an agent whose initialize did not advertise them.
func CheckAdditionalDirs(caps json.RawMessage, dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	var c struct {
		Session struct {
			Dirs json.RawMessage `json:"additionalDirectories"`
		} `json:"sessionCapabilities"`
	}
	_ = json.Unmarshal(caps, &c) // absent or malformed: not advertised
	if len(agentlink.NullToNil(c.Session.Dirs)) == 0 {
		return fmt.Errorf("%w: it does not advertise sessionCapabilities.additionalDirectories", sessionerr.ErrAdditionalDirsUnsupported)
	}
	return nil
}

// Reconfine opens a stored cwd and checks that it is still the directory the session was made in: the path
// resolves to itself (no symlink on it), lies inside today's workspace roots, and is the directory just
// opened (it was not swapped between the open and the check).
func (p *Policy) Reconfine(cwd string) (*os.Root, error) {
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return nil, fmt.Errorf("%w: cwd %q cannot be opened: %v", sessionerr.ErrForbiddenCwd, cwd, errors.Unwrap(err))
	}
	real, err := p.Confine(cwd)
	if err == nil && real != filepath.Clean(cwd) {
		err = fmt.Errorf("%w: cwd %q now resolves to %q (a symlink on its path)", sessionerr.ErrForbiddenCwd, cwd, real)
	}
	if err == nil {
		err = sameDir(root, real)
	}
	if err != nil {
		_ = root.Close()
		if !errors.Is(err, sessionerr.ErrForbiddenCwd) {
			err = fmt.Errorf("%w: %v", sessionerr.ErrForbiddenCwd, err)
		}
		return nil, err
	}
	return root, nil
}

// sameDir checks that the opened root is the directory at path.
func sameDir(root *os.Root, path string) error {
	opened, err := root.Stat(".")
	if err != nil {
		return err
	}
	at, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !os.SameFile(opened, at) {
		return fmt.Errorf("cwd %q changed while it was checked", path)
	}
	return nil
}

package sessions

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// A session's additionalDirectories (ACP): more workspace roots for the agent besides its cwd. Each is confined
// by the workspace roots exactly as the cwd is, granted to a confined agent as its cwd is (read and write), and
// checked again against today's roots before a re-attach passes them to the agent again.

// maxAdditionalDirs bounds how many a session may name.
const maxAdditionalDirs = 32

// confineDirs resolves and confines each directory as Create does a cwd, in order, without duplicates (nor
// the cwd itself).
func (r *Registry) confineDirs(cwd string, dirs []string) ([]string, error) {
	if len(dirs) > maxAdditionalDirs {
		return nil, fmt.Errorf("%w: at most %d additionalDirectories", sessionerr.ErrBadRequest, maxAdditionalDirs)
	}
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%w: additionalDirectories: %q must be an absolute path", sessionerr.ErrBadRequest, d)
		}
		real, err := r.confine(d)
		if err != nil {
			return nil, fmt.Errorf("additionalDirectories: %w", err)
		}
		if real != cwd && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// recheckDirs checks stored additionalDirectories against today's workspace roots: each must still resolve to
// itself (no symlink swapped in on its path) inside them.
func (r *Registry) recheckDirs(dirs []string) error {
	for _, d := range dirs {
		real, err := r.confine(d)
		if err != nil {
			return fmt.Errorf("additionalDirectories: %w", err)
		}
		if real != filepath.Clean(d) {
			return fmt.Errorf("%w: additionalDirectories: %q now resolves to %q (a symlink on its path)", sessionerr.ErrForbiddenCwd, d, real)
		}
	}
	return nil
}

// checkAdditionalDirs refuses additionalDirectories for an agent whose initialize did not advertise them.
func checkAdditionalDirs(caps json.RawMessage, dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	var c struct {
		Session struct {
			Dirs json.RawMessage `json:"additionalDirectories"`
		} `json:"sessionCapabilities"`
	}
	_ = json.Unmarshal(caps, &c) // absent or malformed: not advertised
	if len(core.NullToNil(c.Session.Dirs)) == 0 {
		return fmt.Errorf("%w: it does not advertise sessionCapabilities.additionalDirectories", sessionerr.ErrAdditionalDirsUnsupported)
	}
	return nil
}

// sessionParams are the params of session/new, session/load and session/resume: cwd, mcpServers and, when the
// session has some, additionalDirectories.
func (r *localRunner) sessionParams() map[string]any {
	s := r.s
	p := map[string]any{"cwd": s.Cwd, "mcpServers": core.ControlOf(s).McpServers()}
	if len(s.AdditionalDirs) > 0 {
		p["additionalDirectories"] = s.AdditionalDirs
	}
	return p
}

package services

import (
	"log/slog"
	"os"

	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
)

// Session is what the services ask of the session they serve, so that they import nothing of the core.
type Session interface {
	// MayServe reports whether who may serve the session's tools: nobody (the gateway's own code) or a
	// principal allowed to act on it. It takes the shares' lock, never with the session's.
	MayServe(who principal.Principal) bool
	// LogInTurn logs a `_gateway/*` frame with params, stamped with the running turn if there is one.
	LogInTurn(method string, params map[string]any)
	// Usable is why the session takes no request for its agent now, nil when it does.
	Usable() error
	// Reconfine opens a stored directory again and checks it against today's workspace roots.
	Reconfine(dir string) (*os.Root, error)
}

// Config is one session's part of what the services need: where its files are and the bounds it runs with.
type Config struct {
	SessionID string
	Cwd       string
	// OpenCwd opens the cwd now (a copy's cwd is on its owner's machine; a restored one is opened once checked).
	OpenCwd       bool
	MaxFSRequests int
	// Terminals are the terminals' settings, MoreDirs (the additionalDirectories) included; New sets the
	// workspace and the callbacks.
	Terminals agentsvc.TerminalConfig
	Logger    *slog.Logger
}

// Services is one session's fs/* and terminal/* service and its delegates.
type Services struct {
	// Static after construction.
	s         Session
	id        string
	cwd       string
	moreDirs  []string
	logger    *slog.Logger
	workspace *agentsvc.Workspace // the cwd as the agent's files are served from it (fs_local.go)
	terms     *agentsvc.Terminals // the terminals the gateway runs for the agent (terminal.go)
	fsSlots   chan struct{}       // one element per fs/* request in flight, at most Config.MaxFSRequests (fs.go)
	delegates delegates           // who offers to serve fs/* and terminal/* (delegate.go)
}

// New makes the services of the session s described by cfg.
func New(s Session, cfg Config) *Services {
	sv := &Services{
		s: s, id: cfg.SessionID, cwd: cfg.Cwd, moreDirs: cfg.Terminals.MoreDirs, logger: cfg.Logger,
		workspace: agentsvc.NewWorkspace(cfg.Cwd, cfg.OpenCwd),
		fsSlots:   make(chan struct{}, cfg.MaxFSRequests),
	}
	tc := cfg.Terminals
	tc.Workspace, tc.Usable, tc.Output, tc.Exit = sv.workspace, s.Usable, sv.logTerminalOutput, sv.logTerminalExit
	sv.terms = agentsvc.NewTerminals(tc)
	return sv
}

// CloseRoot releases the cwd's descriptor; fs/* requests after it fail as "cwd gone".
func (sv *Services) CloseRoot() { sv.workspace.Close() }

// ReopenWorkspace makes root, the stored cwd opened after its check, the directory fs/* serves. false once
// the session is closed (root is closed then).
func (sv *Services) ReopenWorkspace(root *os.Root) bool { return sv.workspace.Reopen(root) }

// CloseTerminals closes the terminals the gateway runs for the agent.
func (sv *Services) CloseTerminals() { sv.terms.CloseAll() }

// KillTerminals kills the processes of the terminals the gateway runs for the agent.
func (sv *Services) KillTerminals() { sv.terms.KillAll() }

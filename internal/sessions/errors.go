package sessions

import (
	"errors"
	"io/fs"
	"os/exec"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// Errors the faces map to HTTP statuses and JSON-RPC codes. They are values so callers can errors.Is them.
var (
	ErrNotFound          = store.ErrNotFound // one value: a directory without the entry is a session not found
	ErrUnknownAgent      = errors.New("unknown agent")
	ErrAgentUnavailable  = errors.New("agent unavailable")
	ErrTurnRunning       = errors.New("a turn is already running")
	ErrNoTurn            = errors.New("no turn is running")
	ErrNoTurnYet         = errors.New("no turn has run in this session")
	ErrNotReady          = errors.New("session is not ready")
	ErrClosed            = errors.New("session is closed")
	ErrFailed            = errors.New("session has failed")
	ErrPermissionUnknown = errors.New("permission request not found")
	ErrAlreadyResolved   = errors.New("permission request already resolved")
	ErrUnknownOption     = errors.New("option not offered by the agent")
	// ErrElicitationUnknown is an answer to an elicitation id that was never pending here.
	ErrElicitationUnknown = errors.New("elicitation request not found")
	// ErrInvalidElicitationAnswer is an answer that is not accept/decline/cancel, or content that does not
	// match the request's schema; the request stays pending.
	ErrInvalidElicitationAnswer = ask.ErrInvalidElicitationAnswer
	ErrTooManySessions          = errors.New("too many sessions")
	ErrShuttingDown             = errors.New("gateway is shutting down")
	ErrBadRequest               = errors.New("bad request")
	ErrForbiddenCwd             = errors.New("forbidden cwd")
	// ErrNotResumable is a detached session whose agent can neither load nor resume it (docs/cluster.md §4).
	ErrNotResumable = errors.New("session is not resumable")
	// ErrStoreUnavailable is the store failing a session's hydration or creation; faces answer 503
	// store_unavailable.
	ErrStoreUnavailable = errors.New("session store unavailable")
	// ErrUnknownNode is POST /v1/sessions naming a node that is not live (400 unknown_node).
	ErrUnknownNode = errors.New("unknown node")
)

// AgentError is an agent failing a gateway request (initialize, session/new, set_mode, …): the agent's own
// JSON-RPC error, or a timeout, with the tail of its stderr for the operator.
type AgentError struct {
	Op     string
	Err    error
	Stderr string
}

func (e *AgentError) Error() string {
	if e.Stderr != "" {
		return e.Op + ": " + e.Err.Error() + " (the agent's stderr is in the gateway log)"
	}
	return e.Op + ": " + e.Err.Error()
}
func (e *AgentError) Unwrap() error { return e.Err }

// IsStartFailure reports whether err is an agent's process failing to start (an exec or file system error).
// Its text names the gateway's own paths: faces log it and show clients only the agent's name.
func IsStartFailure(err error) bool {
	var execErr *exec.Error
	var pathErr *fs.PathError
	var wireErr *wireError // the same failure on the owner of a routed command (docs/cluster.md §5)
	return errors.As(err, &execErr) || errors.As(err, &pathErr) || errors.As(err, &wireErr) && wireErr.start
}

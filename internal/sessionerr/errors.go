// Package sessionerr is the session core's error vocabulary: the sentinels every face maps to an HTTP status
// and a JSON-RPC code, the errors that carry more (an agent's failure, a login it needs, the running turn), and
// the stable codes that carry them across nodes. It imports nothing of the session core.
package sessionerr

import (
	"errors"
	"fmt"

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
	// ErrDetached refuses what needs the agent (set_mode, authenticate, …) while the session is detached.
	// It is an ErrNotReady: the session has no agent right now.
	ErrDetached = fmt.Errorf("%w: the session is detached (its agent is not running); a prompt re-attaches it", ErrNotReady)
)

// ErrForbidden is an action the caller's access to a visible session does not allow (a viewer prompting, a
// collaborator changing the mode or the shares).
var ErrForbidden = errors.New("not allowed on this session")

// ErrForkUnsupported is a fork of a session whose agent does not advertise sessionCapabilities.fork.
var ErrForkUnsupported = errors.New("agent does not support session/fork")

// ErrAdditionalDirsUnsupported is a session that names additionalDirectories for an agent that does not
// advertise sessionCapabilities.additionalDirectories (422 additional_directories_unsupported, -32602 on /acp).
var ErrAdditionalDirsUnsupported = fmt.Errorf("agent does not support additionalDirectories")

// Errors of a client's MCP servers; faces answer 422 / JSON-RPC -32602.
var (
	ErrMCPStdioForbidden = errors.New("stdio MCP servers from clients are not allowed by this gateway")
	ErrMCPNameConflict   = errors.New("MCP server name already in use")
	ErrMCPUnsupported    = errors.New("MCP transport not supported by the agent")
	// ErrMCPFixed says when a client's servers can change; its text is also the hint of a name conflict.
	ErrMCPFixed = errors.New("MCP servers can only change while the session is detached (its agent not running)")
)

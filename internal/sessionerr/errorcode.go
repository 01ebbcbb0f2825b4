package sessionerr

import (
	"encoding/json"
	"errors"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/store"
)

// Stable names of the errors, so an error crosses a process boundary (a command routed to the session's
// owner, docs/cluster.md §5) as a code and a message, and the receiving face maps it exactly as it maps the
// owner's own error. Codes are the REST face's problem codes, except no_turn_yet (REST says no_turn for
// both ErrNoTurn and ErrNoTurnYet, with different details) and session_detached (REST says
// session_not_ready for both ErrDetached and ErrNotReady).
const (
	CodeAgentError = "agent_error"      // an *AgentError; its message is the JSON of agentErrorWire
	CodeInternal   = store.CodeInternal // anything else; only the message survives
)

// SentinelCode pairs a sentinel error with its code.
type SentinelCode struct {
	Code string
	Err  error
}

// sentinelCodes lists every sentinel of errors.go and login.go, ErrIdempotencyKeyReused and the store's
// ErrOwnerUnavailable, in the order toProblem tests them (an error that wraps several takes the first).
var sentinelCodes = []SentinelCode{
	{"session_not_found", ErrNotFound},
	{"agent_unavailable", ErrAgentUnavailable},
	{"unknown_agent", ErrUnknownAgent},
	{"agent_login_required", ErrLoginRequired}, // its message is the JSON of loginWire
	{"unknown_login_method", ErrUnknownLoginMethod},
	{"invalid_login_vars", ErrInvalidLoginVars},
	{"forbidden_cwd", ErrForbiddenCwd},
	{"forbidden", ErrForbidden},
	{"mcp_stdio_forbidden", ErrMCPStdioForbidden},
	{"mcp_name_conflict", ErrMCPNameConflict},
	{"mcp_unsupported", ErrMCPUnsupported},
	{"additional_directories_unsupported", ErrAdditionalDirsUnsupported},
	{"fork_unsupported", ErrForkUnsupported},
	{"mcp_fixed", ErrMCPFixed},
	{store.CodeBadRequest, ErrBadRequest}, // the code the command layer replies with itself
	{"turn_running", ErrTurnRunning},
	{"idempotency_key_reused", ErrIdempotencyKeyReused},
	{"no_turn_yet", ErrNoTurnYet},
	{"no_turn", ErrNoTurn},
	{"session_detached", ErrDetached}, // an ErrNotReady: listed first, so it keeps its own REST detail
	{"session_not_ready", ErrNotReady},
	{"session_closed", ErrClosed},
	{"session_failed", ErrFailed},
	{"session_not_resumable", ErrNotResumable},
	{"permission_not_found", ErrPermissionUnknown},
	{"already_resolved", ErrAlreadyResolved},
	{"unknown_option", ErrUnknownOption},
	{"elicitation_not_found", ErrElicitationUnknown},
	{"invalid_elicitation_answer", ErrInvalidElicitationAnswer},
	{"too_many_sessions", ErrTooManySessions},
	{"shutting_down", ErrShuttingDown},
	{"store_unavailable", ErrStoreUnavailable},
	{"owner_unavailable", store.ErrOwnerUnavailable}, // ErrOwnerTimeout too: it wraps it
	{"unknown_node", ErrUnknownNode},
}

// SentinelCodes returns every sentinel with its code (a copy).
func SentinelCodes() []SentinelCode { return append([]SentinelCode(nil), sentinelCodes...) }

// ErrorCode is err's stable code: the first sentinel it wraps, CodeAgentError for an *AgentError,
// CodeInternal otherwise; "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	for _, sc := range sentinelCodes {
		if errors.Is(err, sc.Err) {
			return sc.Code
		}
	}
	var ae *AgentError
	if errors.As(err, &ae) {
		return CodeAgentError
	}
	return CodeInternal
}

// ErrorMessage is the message that goes with ErrorCode(err): err's text, or for an *AgentError its op, error
// (the agent's JSON-RPC code, message and data when it sent one) and stderr as JSON.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var le *LoginRequiredError
	if errors.As(err, &le) {
		b, _ := json.Marshal(loginWire{Agent: le.Agent, AuthMethods: le.AuthMethods, Message: le.Err.Error()})
		return string(b)
	}
	var ae *AgentError
	if ErrorCode(err) == CodeAgentError && errors.As(err, &ae) {
		w := agentErrorWire{Op: ae.Op, Message: ae.Err.Error(), Stderr: ae.Stderr, Start: IsStartFailure(ae.Err)}
		var re *acp.RequestError
		if errors.As(ae.Err, &re) {
			w.RPC = &rpcWire{Code: re.Code, Message: re.Message}
			w.RPC.Data, _ = json.Marshal(re.Data)
			_, w.RPC.DataText = re.Data.(string)
		}
		b, _ := json.Marshal(w)
		return string(b)
	}
	return err.Error()
}

// ErrorFromCode rebuilds the error ErrorCode and ErrorMessage described: errors.Is holds for its sentinel
// and its text is msg; an *AgentError keeps its op, stderr and the agent's JSON-RPC error. An unknown code is
// a plain error with msg.
func ErrorFromCode(code, msg string) error {
	if code == CodeAgentError {
		var w agentErrorWire
		if json.Unmarshal([]byte(msg), &w) == nil && w.Op != "" {
			return w.agentError()
		}
		return errors.New(msg)
	}
	if code == "agent_login_required" {
		var w loginWire
		if json.Unmarshal([]byte(msg), &w) == nil && w.Agent != "" {
			return &LoginRequiredError{Agent: w.Agent, AuthMethods: agentlogin.MethodsArray(w.AuthMethods), Err: errors.New(w.Message)}
		}
	}
	for _, sc := range sentinelCodes {
		if sc.Code == code {
			if msg == sc.Err.Error() {
				return sc.Err
			}
			return &codedError{sentinel: sc.Err, msg: msg}
		}
	}
	return errors.New(msg)
}

// codedError is a sentinel with the message it carried, e.g. "session has failed: agent exited".
type codedError struct {
	sentinel error
	msg      string
}

func (e *codedError) Error() string { return e.msg }
func (e *codedError) Unwrap() error { return e.sentinel }

// agentErrorWire is an *AgentError as ErrorMessage encodes it.
type agentErrorWire struct {
	Op      string   `json:"op"`
	Message string   `json:"message"` // ae.Err.Error()
	RPC     *rpcWire `json:"rpc,omitempty"`
	Stderr  string   `json:"stderr,omitempty"`
	// Start says the agent's process could not be started (IsStartFailure): faces hide its text.
	Start bool `json:"start,omitempty"`
}

type rpcWire struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// DataText says Data was a Go string (agenterr's clipped text), not JSON the agent sent.
	DataText bool `json:"dataText,omitempty"`
}

func (w agentErrorWire) agentError() *AgentError {
	inner := &wireError{msg: w.Message, start: w.Start}
	if w.RPC != nil {
		re := &acp.RequestError{Code: w.RPC.Code, Message: w.RPC.Message}
		switch {
		case len(w.RPC.Data) == 0 || string(w.RPC.Data) == "null":
		case w.RPC.DataText:
			var s string
			_ = json.Unmarshal(w.RPC.Data, &s)
			re.Data = s
		default:
			re.Data = w.RPC.Data
		}
		inner.re = re
	}
	return &AgentError{Op: w.Op, Err: inner, Stderr: w.Stderr}
}

// wireError is an agent's error rebuilt from its text and, when it sent one, its JSON-RPC error.
type wireError struct {
	msg   string
	re    *acp.RequestError
	start bool // the agent's process could not be started (IsStartFailure on the owner)
}

func (e *wireError) Error() string { return e.msg }
func (e *wireError) Unwrap() error {
	if e.re == nil {
		return nil
	}
	return e.re
}

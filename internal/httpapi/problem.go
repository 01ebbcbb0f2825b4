package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// Problem is an RFC 9457 problem detail. Type is "/problems/<code>", stable across releases.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
	// RetryAfter, in seconds, is also sent as the Retry-After header.
	RetryAfter int `json:"retryAfter,omitempty"`
	// TurnID, StopReason and TurnOutcome name the failed turn of a turn_failed (error, failed).
	TurnID      string `json:"turnId,omitempty"`
	StopReason  string `json:"stopReason,omitempty"`
	TurnOutcome string `json:"turnOutcome,omitempty"`
	// StartedBy, with TurnID, names the running turn of a turn_running and who started it: the client joins it
	// (GET /turn?wait=true) and prompts again once it ended.
	StartedBy *principal.Ref `json:"startedBy,omitempty"`
	// LoginID names the caller's running terminal login of a login_in_progress: attach to it or cancel it.
	LoginID string `json:"loginId,omitempty"`
	// Agent and AuthMethods (as the agent described them) go with agent_login_required: the client logs in
	// with one of the methods (/v1/agents/{agent}/login) and tries again.
	Agent       string          `json:"agent,omitempty"`
	AuthMethods json.RawMessage `json:"authMethods,omitempty"`
}

func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

func problem(status int, code, detail string) *Problem {
	return &Problem{Type: "/problems/" + code, Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

// Errors handlers return directly.
func badRequest(format string, args ...any) *Problem {
	return problem(http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...))
}

// toProblem maps domain errors to problems. Unknown errors are 500s whose detail never leaks internals.
func toProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var ae *sessionerr.AgentError
	var mbe *http.MaxBytesError
	var le *sessionerr.LoginRequiredError
	switch {
	case errors.As(err, &le):
		p := problem(http.StatusConflict, "agent_login_required", le.Error()+"; log in with one of authMethods (/v1/agents/"+le.Agent+"/login), then try again")
		p.Agent, p.AuthMethods = le.Agent, le.AuthMethods
		return p
	case errors.Is(err, sessionerr.ErrLoginRequired):
		return problem(http.StatusConflict, "agent_login_required", err.Error())
	case errors.Is(err, sessionerr.ErrUnknownLoginMethod):
		return problem(http.StatusBadRequest, "unknown_login_method", err.Error())
	case errors.Is(err, sessionerr.ErrInvalidLoginVars):
		return problem(http.StatusBadRequest, "invalid_login_vars", err.Error())
	case errors.As(err, &mbe):
		return problem(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
	case errors.Is(err, sessionerr.ErrNotFound):
		return problem(http.StatusNotFound, "session_not_found", "no session with this id")
	case errors.Is(err, sessionerr.ErrAgentUnavailable):
		return problem(http.StatusServiceUnavailable, "agent_unavailable", err.Error()+"; install it or fix the agents configuration, then retry")
	case errors.Is(err, sessionerr.ErrUnknownAgent):
		return problem(http.StatusBadRequest, "unknown_agent", err.Error())
	case errors.Is(err, sessionerr.ErrForbidden):
		return problem(http.StatusForbidden, "forbidden", "the session is shared with you as a viewer (watch only), or only its owner may do this")
	case errors.Is(err, sessionerr.ErrForbiddenCwd):
		return problem(http.StatusForbidden, "forbidden_cwd", err.Error())
	case errors.Is(err, sessionerr.ErrMCPStdioForbidden):
		return problem(http.StatusUnprocessableEntity, "mcp_stdio_forbidden", err.Error())
	case errors.Is(err, sessionerr.ErrMCPNameConflict):
		return problem(http.StatusUnprocessableEntity, "mcp_name_conflict", err.Error())
	case errors.Is(err, sessionerr.ErrAdditionalDirsUnsupported):
		return problem(http.StatusUnprocessableEntity, "additional_directories_unsupported", err.Error())
	case errors.Is(err, sessionerr.ErrForkUnsupported):
		return problem(http.StatusUnprocessableEntity, "fork_unsupported", err.Error())
	case errors.Is(err, sessionerr.ErrMCPUnsupported):
		return problem(http.StatusUnprocessableEntity, "mcp_unsupported", err.Error())
	case errors.Is(err, sessionerr.ErrMCPFixed):
		return problem(http.StatusConflict, "mcp_fixed", err.Error())
	case errors.Is(err, sessionerr.ErrPromptTooLarge):
		return problem(http.StatusRequestEntityTooLarge, "prompt_too_large", strings.TrimPrefix(err.Error(), sessionerr.ErrPromptTooLarge.Error()+": "))
	case errors.Is(err, sessionerr.ErrBadRequest):
		return problem(http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, sessionerr.ErrTurnRunning):
		return turnRunningProblem(err)
	case errors.Is(err, sessionerr.ErrIdempotencyKeyReused):
		return problem(http.StatusUnprocessableEntity, "idempotency_key_reused", "this Idempotency-Key already started a turn for another prompt in this session; use a new key for a new prompt")
	case errors.Is(err, sessionerr.ErrNoTurnYet):
		return problem(http.StatusConflict, "no_turn", "no turn has run in this session yet")
	case errors.Is(err, sessionerr.ErrNoTurn):
		return problem(http.StatusConflict, "no_turn", "no turn is running in this session")
	case errors.Is(err, sessionerr.ErrNotResumable):
		return problem(http.StatusConflict, "session_not_resumable", "the session is detached and its agent can neither load nor resume it; its transcript stays readable")
	case errors.Is(err, sessionerr.ErrDetached):
		return problem(http.StatusConflict, "session_not_ready", "the session is detached (its agent is not running); a prompt re-attaches it")
	case errors.Is(err, sessionerr.ErrNotReady):
		return problem(http.StatusConflict, "session_not_ready", "the session's agent is still starting")
	case errors.Is(err, sessionerr.ErrClosed):
		return problem(http.StatusConflict, "session_closed", "the session is closed")
	case errors.Is(err, sessionerr.ErrFailed):
		return problem(http.StatusConflict, "session_failed", err.Error())
	case errors.Is(err, sessionerr.ErrPermissionUnknown):
		return problem(http.StatusNotFound, "permission_not_found", "no pending permission request with this id")
	case errors.Is(err, sessionerr.ErrAlreadyResolved):
		return problem(http.StatusConflict, "already_resolved", "the request was already resolved")
	case errors.Is(err, sessionerr.ErrElicitationUnknown):
		return problem(http.StatusNotFound, "elicitation_not_found", "no pending elicitation with this id")
	case errors.Is(err, sessionerr.ErrInvalidElicitationAnswer):
		return problem(http.StatusBadRequest, "invalid_elicitation_answer", err.Error()+"; the request stays pending")
	case errors.Is(err, sessionerr.ErrUnknownOption):
		return problem(http.StatusUnprocessableEntity, "unknown_option", "optionId was not offered by the agent; the request stays pending")
	case errors.Is(err, sessionerr.ErrTooManySessions):
		p := problem(http.StatusServiceUnavailable, "too_many_sessions", "the gateway is at its session limit")
		p.RetryAfter = 30
		return p
	case errors.Is(err, sessionerr.ErrShuttingDown):
		p := problem(http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
		p.RetryAfter = 5
		return p
	case errors.Is(err, sessionerr.ErrStoreUnavailable):
		p := problem(http.StatusServiceUnavailable, "store_unavailable", "the session store did not answer; retry")
		p.RetryAfter = 5
		return p
	case errors.Is(err, store.ErrOwnerUnavailable):
		p := problem(http.StatusServiceUnavailable, "owner_unavailable", "the node that runs this session did not answer; retry")
		p.RetryAfter = 5
		return p
	case errors.Is(err, sessionerr.ErrUnknownNode):
		return problem(http.StatusBadRequest, "unknown_node", err.Error())
	case errors.As(err, &ae):
		return agentProblem(ae)
	}
	return problem(http.StatusInternalServerError, "internal", "internal error")
}

// turnRunningProblem is a 409 turn_running naming the running turn when the session knows it (not while a
// prompt re-attaches the session).
func turnRunningProblem(err error) *Problem {
	var tre *sessionerr.TurnRunningError
	if !errors.As(err, &tre) || tre.TurnID == "" {
		return problem(http.StatusConflict, "turn_running", "a turn is already running in this session; cancel it or wait")
	}
	p := problem(http.StatusConflict, "turn_running", "turn "+tre.TurnID+" is running in this session; wait for it (GET /v1/sessions/{id}/turn?wait=true), then prompt again, or cancel it")
	p.TurnID, p.StartedBy = tre.TurnID, tre.StartedBy
	return p
}

// agentProblem maps an agent's failure. Only a request that carried the client's own params (set_mode,
// set_config_option) can be the client's fault: the agent's -32602 there is a 400 agent_invalid_params.
// Everything the gateway sends on its own (initialize, the configured authenticate, session/new) is the
// agent's or the operator's business, never the client's: a 502 — agent_auth_failed when the agent refused
// the `authenticate` method the operator configured, agent_error otherwise.
func agentProblem(ae *sessionerr.AgentError) *Problem {
	var re *acp.RequestError
	switch {
	case strings.HasPrefix(ae.Op, "authenticate"):
		return problem(http.StatusBadGateway, "agent_auth_failed", ae.Error()+" (check the agent's \"authenticate\" method in the gateway's agents file)")
	case errors.As(ae.Err, &re) && re.Code == -32602 && clientParamsOps[ae.Op]:
		return problem(http.StatusBadRequest, "agent_invalid_params", ae.Error())
	}
	return problem(http.StatusBadGateway, "agent_error", ae.Error())
}

// clientParamsOps are the agent calls whose params come from the client's request body.
var clientParamsOps = map[string]bool{"session/set_mode": true, "session/set_config_option": true}

// writeError renders any handler error.
func writeError(w http.ResponseWriter, err error) {
	p := toProblem(err)
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

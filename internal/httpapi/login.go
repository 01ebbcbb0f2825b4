package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/go-chi/chi/v5"
)

// Agent login (docs/rest.md "Agent login"): the caller's own login to an agent that answered
// agent_login_required. Values of login variables are never echoed: answers name variables only.

// loginEnvRequest is the body of PUT /v1/agents/{agent}/login/env.
type loginEnvRequest struct {
	MethodID string            `json:"methodId"`
	Vars     map[string]string `json:"vars"`
}

// loginAgentRequest is the body of POST /v1/agents/{agent}/login/agent.
type loginAgentRequest struct {
	MethodID string `json:"methodId"`
}

func (s *Server) getLogin(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Registry.LoginStatus(r.Context(), principal.From(r.Context()), chi.URLParam(r, "agent"))
	if err != nil {
		return loginProblem(err)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) putLoginEnv(w http.ResponseWriter, r *http.Request) error {
	var req loginEnvRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.MethodID == "" {
		return badRequest(`"methodId" is required`)
	}
	st, err := s.Registry.SetLoginEnv(r.Context(), principal.From(r.Context()), chi.URLParam(r, "agent"), req.MethodID, req.Vars)
	if err != nil {
		return loginProblem(err)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) postLoginAgent(w http.ResponseWriter, r *http.Request) error {
	var req loginAgentRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.MethodID == "" {
		return badRequest(`"methodId" is required`)
	}
	agent := chi.URLParam(r, "agent")
	res, err := s.Registry.LoginAgentMethod(r.Context(), principal.From(r.Context()), agent, req.MethodID)
	if err != nil {
		return loginProblem(err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"agent": agent, "methodId": req.MethodID, "result": json.RawMessage(res)})
	return nil
}

func (s *Server) deleteLogin(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Registry.Logout(r.Context(), principal.From(r.Context()), chi.URLParam(r, "agent"))
	if err != nil {
		return loginProblem(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// loginProblem maps a login route's errors: a refused shared login is a 403 that says why, and the agent
// failing authenticate or logout is 502 agent_auth_failed (not an agents-file problem here).
func loginProblem(err error) error {
	var ae *sessionerr.AgentError
	switch {
	case errors.Is(err, sessionerr.ErrForbidden):
		return problem(http.StatusForbidden, "forbidden", err.Error())
	case errors.As(err, &ae) && (ae.Op == "logout" || strings.HasPrefix(ae.Op, "authenticate")):
		return problem(http.StatusBadGateway, "agent_auth_failed", ae.Error())
	}
	return err
}

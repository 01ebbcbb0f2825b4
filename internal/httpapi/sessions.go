package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/go-chi/chi/v5"
)

func (s *Server) session(r *http.Request) (*sessions.Session, error) {
	id := chi.URLParam(r, "id")
	if len(id) > 128 {
		return nil, sessionerr.ErrNotFound
	}
	return s.Registry.GetAs(principal.From(r.Context()), id)
}

type createRequest struct {
	Agent            string          `json:"agent"`
	Cwd              string          `json:"cwd"`
	AdditionalDirs   []string        `json:"additionalDirectories"` // ACP's; confined as cwd is
	PermissionPolicy string          `json:"permissionPolicy"`
	MCPServers       json.RawMessage `json:"mcpServers"` // ACP's McpServer array; agents.ParseMCPServers
	Node             string          `json:"node"`       // mode c: the node that should run the session
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return sessionerr.ErrShuttingDown
	}
	var req createRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	mcp, err := agents.ParseMCPServers(req.MCPServers)
	if err != nil {
		return badRequest("%v", err)
	}
	sess, err := s.Registry.Create(r.Context(), sessions.CreateOptions{Agent: req.Agent, Cwd: req.Cwd, AdditionalDirs: req.AdditionalDirs, PermissionPolicy: req.PermissionPolicy, Owner: principal.From(r.Context()), MCPServers: mcp, Node: req.Node})
	if err != nil {
		return s.hideStartFailure(r, req.Agent, err)
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID)
	writeJSON(w, http.StatusCreated, sess.View())
	return nil
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	list := s.Registry.ListAs(principal.From(r.Context()))
	views := make([]sessions.View, 0, len(list))
	for _, sess := range list {
		views = append(views, sess.View())
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": views})
	return nil
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess.Detail())
	return nil
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	deleteAgent, err := agentDeleteParam(r)
	if err != nil {
		return err
	}
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	if deleteAgent {
		return s.deleteSessionAgent(w, r, sess)
	}
	if err := sess.CloseAs(principal.From(r.Context()), "closed by client"); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// promptRequest is the body of POST /prompt: exactly one of Text and Prompt.
type promptRequest struct {
	Text   *string         `json:"text"`
	Prompt json.RawMessage `json:"prompt"`
}

// blocks returns the request's ACP content blocks. A body that is not exactly one of a non-empty "text" and
// a non-empty "prompt" array of blocks is 400 invalid_prompt: one code for "what to say is missing or
// ambiguous", apart from the bad_request of other fields.
func (req promptRequest) blocks() ([]json.RawMessage, error) {
	switch {
	case req.Text != nil && req.Prompt != nil:
		return nil, invalidPrompt(`give either "text" or "prompt", not both`)
	case req.Text != nil:
		if *req.Text == "" {
			return nil, invalidPrompt(`"text" is empty`)
		}
		b, _ := json.Marshal(map[string]string{"type": "text", "text": *req.Text})
		return []json.RawMessage{b}, nil
	case req.Prompt != nil:
		blocks, err := sessions.ParsePrompt(req.Prompt)
		if errors.Is(err, sessionerr.ErrBadRequest) {
			return nil, invalidPrompt(strings.TrimPrefix(err.Error(), sessionerr.ErrBadRequest.Error()+": "))
		}
		return blocks, err
	default:
		return nil, invalidPrompt(`body needs "text" (a string) or "prompt" (an array of ACP content blocks)`)
	}
}

func invalidPrompt(detail string) *Problem {
	return problem(http.StatusBadRequest, "invalid_prompt", detail)
}

func (s *Server) prompt(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	wait, err := parseWait(r)
	if err != nil {
		return err
	}
	var req promptRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	blocks, err := req.blocks()
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	// A detached session's agent is started again first; a client that goes away meanwhile starts no turn.
	turn, replayed, err := sess.PromptWith(r.Context(), principal.From(r.Context()), blocks, sessions.PromptOptions{IdempotencyKey: key})
	if err != nil {
		if r.Context().Err() != nil {
			return nil // nobody is left to answer
		}
		return s.hideStartFailure(r, sess.Agent, err)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if !wait.wait {
		writeJSON(w, http.StatusAccepted, map[string]string{"turnId": turn.ID})
		return nil
	}
	st, ok := awaitTurn(r, sess, turn, wait)
	if !ok {
		return nil // the caller went away; the turn goes on and is visible on the session's stream
	}
	return writeTurnState(w, st, true)
}

func boolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("query parameter %q must be true or false", name)
	}
	return b, nil
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	turnID, err := sess.CancelAs(r.Context(), principal.From(r.Context()))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"turnId": turnID})
	return nil
}

func (s *Server) setMode(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req struct {
		ModeID string `json:"modeId"`
	}
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.ModeID == "" {
		return badRequest(`"modeId" is required`)
	}
	if err := sess.SetModeAs(r.Context(), principal.From(r.Context()), req.ModeID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (s *Server) setConfig(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req struct {
		ConfigID string          `json:"configId"`
		Value    json.RawMessage `json:"value"`
	}
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.ConfigID == "" || len(req.Value) == 0 {
		return badRequest(`"configId" and "value" are required`)
	}
	opts, err := sess.SetConfigOptionAs(r.Context(), principal.From(r.Context()), req.ConfigID, req.Value)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"configOptions": opts})
	return nil
}

func (s *Server) listPermissions(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"permissions": sess.PendingPermissions()})
	return nil
}

type answerRequest struct {
	OptionID string `json:"optionId"`
	Outcome  string `json:"outcome"`
}

func (s *Server) answerPermission(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	wait, err := parseWait(r)
	if err != nil {
		return err
	}
	var req answerRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	var ans translateAnswer
	switch {
	case req.OptionID != "" && req.Outcome != "" && req.Outcome != "selected":
		return badRequest(`give "optionId" or "outcome":"cancelled", not both`)
	case req.OptionID != "":
		ans.Outcome.Outcome, ans.Outcome.OptionID = "selected", req.OptionID
	case req.Outcome == "cancelled":
		ans.Outcome.Outcome = "cancelled"
	default:
		return badRequest(`body needs "optionId" (one the agent offered) or "outcome":"cancelled"`)
	}
	permID := chi.URLParam(r, "permissionId")
	ans.For = "permission"
	return s.answerAndWait(w, r, sess, wait, permID, ans, func(o ask.Outcome, st *sessions.TurnState) any {
		if st == nil {
			return map[string]any{"permissionId": permID, "outcome": o.ClientJSON()}
		}
		return answeredTurn{PermissionID: permID, Outcome: o.ClientJSON(), TurnState: *st}
	})
}

// answerAndWait applies a client's answer to a pending request (a permission or an elicitation) and writes
// body(outcome, nil), or with `wait=true` body(outcome, where the request's turn then stands).
func (s *Server) answerAndWait(w http.ResponseWriter, r *http.Request, sess *sessions.Session, wait waitParams, id string, ans ask.ClientAnswer, body func(ask.Outcome, *sessions.TurnState) any) error {
	o, turn, err := sess.AnswerInTurnAs(principal.From(r.Context()), id, ans, "rest")
	if err != nil {
		return err
	}
	if !wait.wait || turn == nil {
		writeJSON(w, http.StatusOK, body(o, nil))
		return nil
	}
	st, ok := awaitTurn(r, sess, turn, wait)
	if !ok {
		return nil // the caller went away; the answer stands and the turn goes on
	}
	code, err := turnReply(st, true)
	if err != nil {
		return err
	}
	writeJSON(w, code, body(o, &st))
	return nil
}

// answeredTurn is the answer to `permissions/{pid}?wait=true`: the permission's outcome and where its turn
// then stands.
type answeredTurn struct {
	PermissionID string `json:"permissionId"`
	Outcome      any    `json:"outcome"`
	sessions.TurnState
}

// hideStartFailure keeps the reason an agent's process could not be started (its binary's path, the
// gateway's file system) in the log and shows clients the agent's name and a stable code instead.
func (s *Server) hideStartFailure(r *http.Request, agent string, err error) error {
	if !sessionerr.IsStartFailure(err) {
		return err
	}
	if agent == "" {
		agent = s.Registry.DefaultAgent()
	}
	s.logger().Warn("agent start failed", "request", RequestID(r.Context()), "agent", agent, "err", err)
	return problem(http.StatusBadGateway, "agent_start_failed", fmt.Sprintf("agent %q could not be started; the gateway log has the reason", agent))
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// forkRequest is the optional body of POST /v1/sessions/{id}/fork: what it leaves out comes from the source
// (cwd, additionalDirectories); mcpServers are the forker's own.
type forkRequest struct {
	Cwd            string          `json:"cwd"`
	AdditionalDirs []string        `json:"additionalDirectories"`
	MCPServers     json.RawMessage `json:"mcpServers"`
}

// forkSession makes a new session, owned by the caller, from the agent's fork of the session and the
// session's transcript so far (sessions.ForkAs).
func (s *Server) forkSession(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return sessionerr.ErrShuttingDown
	}
	src, err := s.session(r)
	if err != nil {
		return err
	}
	var req forkRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	mcp, err := agents.ParseMCPServers(req.MCPServers)
	if err != nil {
		return badRequest("%v", err)
	}
	fork, err := s.Registry.ForkAs(r.Context(), principal.From(r.Context()), src, sessions.ForkOptions{Cwd: req.Cwd, AdditionalDirs: req.AdditionalDirs, MCPServers: mcp})
	if err != nil {
		return s.hideStartFailure(r, src.Agent, err)
	}
	w.Header().Set("Location", "/v1/sessions/"+fork.ID)
	writeJSON(w, http.StatusCreated, fork.View())
	return nil
}

// deleteSessionAgent is DELETE /v1/sessions/{id}?agent=delete: the session is deleted as without the
// parameter, and the agent's own copy too where the agent supports ACP session/delete; the answer says which.
func (s *Server) deleteSessionAgent(w http.ResponseWriter, r *http.Request, sess *sessions.Session) error {
	d, err := sess.DeleteAs(r.Context(), principal.From(r.Context()), "deleted by client")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"agentSession": d})
	return nil
}

// agentDeleteParam reads DELETE's `agent` query parameter: absent keeps the agent's copy, "delete" asks for
// its deletion; anything else is 400.
func agentDeleteParam(r *http.Request) (bool, error) {
	switch v, ok := r.URL.Query()["agent"]; {
	case !ok:
		return false, nil
	case len(v) == 1 && v[0] == "delete":
		return true, nil
	default:
		return false, badRequest("agent=%s: the only value is agent=delete", strconv.Quote(v[len(v)-1]))
	}
}

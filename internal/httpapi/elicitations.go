package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/go-chi/chi/v5"
)

// listElicitations serves `GET /v1/sessions/{id}/elicitations`: the agent's questions waiting for a user.
func (s *Server) listElicitations(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"elicitations": sess.PendingElicitations()})
	return nil
}

// elicitationAnswer is the body of `POST …/elicitations/{elicitationId}`: the ACP response itself.
type elicitationAnswer struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content"`
}

// answeredElicitation is the answer to `POST …/elicitations/{elicitationId}`, with `wait=true` also where the
// request's turn then stands.
type answeredElicitation struct {
	ID      string `json:"id"`
	Outcome any    `json:"outcome"`
	*sessions.TurnState
}

// answerElicitation serves `POST /v1/sessions/{id}/elicitations/{elicitationId}`: the first valid answer wins,
// as for a permission; content that does not match the request's schema is a 400 and leaves it pending.
func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	wait, err := parseWait(r)
	if err != nil {
		return err
	}
	var req elicitationAnswer
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	id := chi.URLParam(r, "elicitationId")
	ans := ask.ClientAnswer{Action: req.Action, Content: req.Content, For: "elicitation"}
	return s.answerAndWait(w, r, sess, wait, id, ans, func(o ask.Outcome, st *sessions.TurnState) any {
		return answeredElicitation{ID: id, Outcome: o.ClientJSON(), TurnState: st}
	})
}

package httpapi

import (
	"net/http"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/go-chi/chi/v5"
)

// listShares is `GET /v1/sessions/{id}/shares`: who the session is shared with, for whoever sees it.
func (s *Server) listShares(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"owner": sess.Owner.Ref(), "shares": sess.Shares()})
	return nil
}

// shareRequest is the body of `PUT /v1/sessions/{id}/shares/{principal}`.
type shareRequest struct {
	Role string `json:"role"`
}

// putShare is `PUT /v1/sessions/{id}/shares/{principal}` with `{"role": "viewer"|"collaborator"}`: the owner
// (or an admin) shares the session.
func (s *Server) putShare(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req shareRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	role, err := sessions.ParseShareRole(req.Role)
	if err != nil {
		return err
	}
	with := chi.URLParam(r, "principal")
	if err := sess.ShareAs(principal.From(r.Context()), with, role); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, store.Share{Principal: with, Role: role})
	return nil
}

// deleteShare is `DELETE /v1/sessions/{id}/shares/{principal}`: the owner (or an admin) ends a share; one
// that does not exist is no error.
func (s *Server) deleteShare(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	if err := sess.UnshareAs(principal.From(r.Context()), chi.URLParam(r, "principal")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

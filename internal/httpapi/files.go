package httpapi

import (
	"net/http"
	"strconv"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// listFiles is `GET /v1/sessions/{id}/files?q=&limit=`: files and directories in the session's cwd and
// additionalDirectories whose path contains q, best match first, for a client to mention in a prompt.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	opts := sessions.FilesOptions{Query: q.Get("q")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > sessions.MaxFileLimit {
			return badRequest("limit must be an integer between 1 and %d", sessions.MaxFileLimit)
		}
		opts.Limit = n
	}
	res, err := sess.ListFilesAs(r.Context(), principal.From(r.Context()), opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// renameSession is `PATCH /v1/sessions/{id}` `{"title": …}`.
func (s *Server) renameSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req struct {
		Title *string `json:"title"`
	}
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.Title == nil {
		return badRequest(`"title" is required`)
	}
	title, err := sess.RenameAs(r.Context(), principal.From(r.Context()), *req.Title)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": sess.ID, "title": title})
	return nil
}

// workspaceDirs is `GET /v1/workspace/dirs?path=`: the workspace roots, or the directories under path, for a
// client's cwd picker.
func (s *Server) workspaceDirs(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Registry.WorkspaceDirs(r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

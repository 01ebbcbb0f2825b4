package httpapi

import (
	"net/http"
	"time"
)

// meResponse is `GET /v1/me`: who the gateway thinks is calling, so a client shows it rather than guessing.
type meResponse struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Role       string      `json:"role"`
	Via        string      `json:"via"`                  // token, users, oidc, proxy or none
	ExpiresAt  *time.Time  `json:"expiresAt,omitempty"`  // when the credential expires (OIDC)
	SessionCap *sessionCap `json:"sessionCap,omitempty"` // the per-user session cap, when one applies
}

// sessionCap is the per-user session cap a user is under and how many sessions count against it.
type sessionCap struct {
	Max  int `json:"max"`
	Used int `json:"used"`
}

// me is `GET /v1/me`.
func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	id := identityFrom(r.Context())
	res := meResponse{ID: id.p.ID, Name: id.p.Name, Role: string(id.p.Role), Via: id.via}
	if !id.expires.IsZero() {
		exp := id.expires.UTC()
		res.ExpiresAt = &exp
	}
	if max, used := s.Registry.UserCap(id.p); max > 0 {
		res.SessionCap = &sessionCap{Max: max, Used: used}
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

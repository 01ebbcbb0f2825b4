package httpapi

import (
	"net/http"

	"github.com/acp-gateway/gateway/internal/principal"
)

// adminOnly serves h to admins only: /metrics names principals and what each spent, which one user must not
// learn of another. Without authentication every caller is the anonymous admin.
func adminOnly(h http.Handler) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if !principal.From(r.Context()).IsAdmin() {
			return problem(http.StatusForbidden, "forbidden", "only an admin may read the metrics")
		}
		h.ServeHTTP(w, r)
		return nil
	})
}

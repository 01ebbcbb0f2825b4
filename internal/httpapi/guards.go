package httpapi

import (
	"net/http"
	"strings"
)

// hostOpen lists the routes served whatever the Host: probes carry whatever name the orchestrator uses.
func hostOpen(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
}

// guardHost refuses requests whose Host the policy does not serve, on every route but the probes.
func (s *Server) guardHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostOpen(r) && !s.hosts.Allows(r.Host) {
			writeError(w, problem(http.StatusForbidden, "misdirected_host",
				"host "+truncate(r.Host, 100)+" is not served; see --allowed-hosts"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guardOrigin refuses cross-origin requests that change state or open a WebSocket (403), answers CORS
// preflights for allowed origins, and adds CORS headers only for allowed origins. Safe cross-origin requests
// pass without CORS headers, so the browser keeps their answers from the foreign page.
func (s *Server) guardOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := s.origins.Allows(r)
		if allowed && origin != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Location, Retry-After, X-Request-Id, Acp-Connection-Id, Idempotent-Replayed")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed {
				writeError(w, problem(http.StatusForbidden, "forbidden_origin", "origin not allowed"))
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID, X-Request-Id, Acp-Connection-Id, Acp-Session-Id, Idempotency-Key")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions
		if !allowed && (!safe || isUpgrade(r)) {
			writeError(w, problem(http.StatusForbidden, "forbidden_origin", "origin "+truncate(origin, 100)+" is not allowed; see --allowed-origins"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

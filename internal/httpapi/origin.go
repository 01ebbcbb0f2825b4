package httpapi

import (
	"net/http"
	"strings"
)

// originPolicy is the one browser-origin policy of every route, WebSocket upgrades included (ws and acpws
// accept any Origin because this policy already ran). http.CrossOriginProtection decides what is same-origin
// (Sec-Fetch-Site, else Origin against Host); --allowed-origins patterns, which may hold "*" wildcards that
// CrossOriginProtection's exact trusted origins cannot express, are matched here with matchHost.
type originPolicy struct {
	// Static after construction.
	cop      *http.CrossOriginProtection
	patterns []string
}

func newOriginPolicy(patterns []string) originPolicy {
	return originPolicy{cop: http.NewCrossOriginProtection(), patterns: patterns}
}

// listed reports whether origin matches an --allowed-origins pattern (scheme ignored).
func (p originPolicy) listed(origin string) bool {
	if origin == "" {
		return false
	}
	host := origin
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	for _, pat := range p.patterns {
		if matchHost(pat, host) {
			return true
		}
	}
	return false
}

// allows reports whether r may act as if it were same-origin: a listed origin, or what
// CrossOriginProtection accepts for a state-changing request (same origin, or not from a browser). GETs are
// judged as if they changed state, which is what an upgrade does.
func (p originPolicy) allows(r *http.Request) bool {
	if p.listed(r.Header.Get("Origin")) {
		return true
	}
	if r.Method == http.MethodPost {
		return p.cop.Check(r) == nil
	}
	asPost := r.WithContext(r.Context())
	asPost.Method = http.MethodPost
	return p.cop.Check(asPost) == nil
}

// guardOrigin refuses cross-origin requests that change state or open a WebSocket (403), answers CORS
// preflights for allowed origins, and adds CORS headers only for allowed origins. Safe cross-origin requests
// pass without CORS headers, so the browser keeps their answers from the foreign page.
func (s *Server) guardOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := s.origins.allows(r)
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

// matchHost matches a host[:port] against a pattern where "*" matches any run of characters.
func matchHost(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(host)
	if !strings.Contains(pattern, "*") {
		return pattern == host
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(host, parts[0]) {
		return false
	}
	host = host[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(host, p)
		}
		j := strings.Index(host, p)
		if j < 0 {
			return false
		}
		host = host[j+len(p):]
	}
	return true
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

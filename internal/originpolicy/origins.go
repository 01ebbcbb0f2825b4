package originpolicy

import (
	"net/http"
	"strings"
)

// Origins is the one browser-origin policy of every route, WebSocket upgrades included (ws and acpws
// accept any Origin because this policy already ran). http.CrossOriginProtection decides what is same-origin
// (Sec-Fetch-Site, else Origin against Host); --allowed-origins patterns, which may hold "*" wildcards that
// CrossOriginProtection's exact trusted origins cannot express, are matched here with matchHost.
type Origins struct {
	// Static after construction.
	cop      *http.CrossOriginProtection
	patterns []string
}

// NewOrigins is the policy of --allowed-origins patterns beside same-origin requests.
func NewOrigins(patterns []string) Origins {
	return Origins{cop: http.NewCrossOriginProtection(), patterns: patterns}
}

// listed reports whether origin matches an --allowed-origins pattern (scheme ignored).
func (p Origins) listed(origin string) bool {
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

// Allows reports whether r may act as if it were same-origin: a listed origin, or what
// CrossOriginProtection accepts for a state-changing request (same origin, or not from a browser). GETs are
// judged as if they changed state, which is what an upgrade does.
func (p Origins) Allows(r *http.Request) bool {
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

package httpapi

import (
	"net"
	"net/http"
	"strings"
)

// hostPolicy decides which Host names the gateway answers. Without a token the gateway trusts whoever can
// connect to it, which on loopback is the local user, but a page on a rebinding domain (attacker.example
// resolving to 127.0.0.1) reaches it too and its requests are same-origin to the browser. Such requests carry
// the attacker's name in Host, so serving only loopback names and configured ones closes that door.
type hostPolicy struct {
	// Static after construction.
	restrict   bool     // false: any Host is served (token mode without --allowed-hosts)
	listenHost string   // the host part of the listen address, served as a literal
	patterns   []string // --allowed-hosts, matched by matchHost
}

// allows reports whether hostport (a Host header) is served.
func (p hostPolicy) allows(hostport string) bool {
	if !p.restrict {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	if p.listenHost != "" && strings.EqualFold(host, strings.Trim(p.listenHost, "[]")) {
		return true
	}
	for _, pat := range p.patterns {
		// A pattern without a port names the host on any port (a proxy may or may not add one).
		if matchHost(pat, hostport) || !hasPort(pat) && matchHost(pat, host) {
			return true
		}
	}
	return false
}

func hasPort(pattern string) bool {
	i := strings.LastIndexByte(pattern, ':')
	return i >= 0 && i > strings.LastIndexByte(pattern, ']')
}

// hostOpen lists the routes served whatever the Host: probes carry whatever name the orchestrator uses.
func hostOpen(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
}

// guardHost refuses requests whose Host the policy does not serve, on every route but the probes.
func (s *Server) guardHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostOpen(r) && !s.hosts.allows(r.Host) {
			writeError(w, problem(http.StatusForbidden, "misdirected_host",
				"host "+truncate(r.Host, 100)+" is not served; see --allowed-hosts"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

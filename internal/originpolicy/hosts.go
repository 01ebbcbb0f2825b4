package originpolicy

import (
	"net"
	"strings"
)

// Hosts decides which Host names the gateway answers. Without a token the gateway trusts whoever can
// connect to it, which on loopback is the local user, but a page on a rebinding domain (attacker.example
// resolving to 127.0.0.1) reaches it too and its requests are same-origin to the browser. Such requests carry
// the attacker's name in Host, so serving only loopback names and configured ones closes that door.
type Hosts struct {
	// Static after construction.
	Restrict   bool     // false: any Host is served (token mode without --allowed-hosts)
	ListenHost string   // the host part of the listen address, served as a literal
	Patterns   []string // --allowed-hosts, matched by matchHost
}

// Allows reports whether hostport (a Host header) is served.
func (p Hosts) Allows(hostport string) bool {
	if !p.Restrict {
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
	if p.ListenHost != "" && strings.EqualFold(host, strings.Trim(p.ListenHost, "[]")) {
		return true
	}
	for _, pat := range p.Patterns {
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

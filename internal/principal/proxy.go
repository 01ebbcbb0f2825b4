package principal

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"unicode"
)

// ProxyHeader trusts a header naming the user (X-Forwarded-User behind an SSO proxy) only on connections
// from the proxies' addresses. Static after construction.
type ProxyHeader struct {
	Header  string
	Proxies []netip.Prefix
}

// ParseProxies parses a comma-separated list of CIDRs or addresses.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want a CIDR (10.0.0.0/8) or an address", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Name returns the user the header names. present is false when the request has no such header; trusted is
// false when it came from elsewhere than a trusted proxy (the header must then be ignored), or names nobody
// usable.
func (h *ProxyHeader) Name(r *http.Request) (name string, present, trusted bool) {
	v := r.Header.Get(h.Header)
	if v == "" {
		return "", false, false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return "", true, false
	}
	addr = addr.Unmap()
	for _, p := range h.Proxies {
		if p.Contains(addr) {
			return v, true, validName(v)
		}
	}
	return "", true, false
}

// validName refuses names a principal id cannot be: empty, long, or holding spaces, '/' or control
// characters.
func validName(s string) bool {
	if s == "" || len(s) > 128 || strings.ContainsRune(s, '/') {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

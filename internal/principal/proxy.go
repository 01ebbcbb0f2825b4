package principal

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
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

// Name returns the user the header names. present is false when the request has no such header; refused
// says why the header must be ignored: it came from elsewhere than a trusted proxy, or names nobody a proxy
// may name (CheckLocalName: another source's id, a built-in one, or a malformed name).
func (h *ProxyHeader) Name(r *http.Request) (name string, present bool, refused error) {
	v := r.Header.Get(h.Header)
	if v == "" {
		return "", false, nil
	}
	if !h.fromProxy(r) {
		return "", true, errNotAProxy
	}
	if err := CheckLocalName(v); err != nil {
		return "", true, err
	}
	return v, true, nil
}

var errNotAProxy = errors.New("the address is not a trusted proxy")

// fromProxy reports whether r came from one of the proxies' addresses.
func (h *ProxyHeader) fromProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range h.Proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

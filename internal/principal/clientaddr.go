package principal

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the address of the client behind r: the peer's address, unless the peer is one of the trusted
// proxies, in which case X-Forwarded-For is read from its right end past every trusted proxy, so an address a
// client wrote into the header itself is never taken for its own (a proxy appends the peer it saw). A header
// that does not parse leaves the last trusted hop's address. Without proxies it is the peer's address.
func ClientAddr(r *http.Request, proxies []netip.Prefix) string {
	peer := hostOf(r.RemoteAddr)
	addr, err := netip.ParseAddr(peer)
	if err != nil || !trusted(addr.Unmap(), proxies) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	var list []string
	for _, h := range hops {
		list = append(list, strings.Split(h, ",")...)
	}
	client := addr.Unmap()
	for i := len(list) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(hostOf(strings.TrimSpace(list[i])))
		if err != nil {
			break // not written by a proxy we trust: stop at the last hop we can vouch for
		}
		client = hop.Unmap()
		if !trusted(client, proxies) {
			break
		}
	}
	return client.String()
}

// trusted reports whether addr is in one of the proxies' ranges.
func trusted(addr netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// hostOf strips a port (and IPv6 brackets) from an address, leaving anything else as it is.
func hostOf(s string) string {
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
}

package principal

import (
	"net/http"
	"net/netip"
	"testing"
)

// TestClientAddr: behind trusted proxies the client is the rightmost X-Forwarded-For hop that is not a trusted
// proxy, so what a client writes into the header itself never becomes its address; from anyone else the
// header is ignored.
func TestClientAddr(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy, header ignored", "192.0.2.7:4000", []string{"198.51.100.1"}, "192.0.2.7"},
		{"trusted proxy, one hop", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed hop left of the real one", "127.0.0.1:5000", []string{"203.0.113.9, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted proxies", "127.0.0.1:5000", []string{"198.51.100.1, 10.1.2.3"}, "198.51.100.1"},
		{"header split over lines", "127.0.0.1:5000", []string{"203.0.113.9", "198.51.100.1, 10.1.2.3"}, "198.51.100.1"},
		{"every hop trusted", "127.0.0.1:5000", []string{"10.0.0.2, 10.0.0.3"}, "10.0.0.2"},
		{"garbage stops the walk", "127.0.0.1:5000", []string{"198.51.100.1, nonsense"}, "127.0.0.1"},
		{"no header", "127.0.0.1:5000", nil, "127.0.0.1"},
		{"IPv6 proxy and client", "[::1]:5000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"mapped IPv4 peer", "[::ffff:127.0.0.1]:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"hop with a port", "127.0.0.1:5000", []string{"198.51.100.1:1234"}, "198.51.100.1"},
		{"no proxies configured", "127.0.0.1:5000", []string{"198.51.100.1"}, "127.0.0.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.peer
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			ps := proxies
			if c.name == "no proxies configured" {
				ps = nil
			}
			if got := ClientAddr(r, ps); got != c.want {
				t.Fatalf("ClientAddr = %q, want %q", got, c.want)
			}
		})
	}
}

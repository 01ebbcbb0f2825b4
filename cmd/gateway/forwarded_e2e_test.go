package main

import (
	"context"
	"net"
	"net/http"
	"testing"
)

// clientFrom is an HTTP client whose connections leave from the loopback address ip (127.0.0.2, …), so a test
// can be several clients, as a proxy or the gateway sees them. Its idle connections close at cleanup.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext, ForceAttemptHTTP2: false}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: contractTransport{next: tr}}
}

// statusFrom sends GET path with the given headers through c and returns the status.
func statusFrom(t *testing.T, c *http.Client, url string, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestForwardedClientFromTrustedProxy: behind a proxy listed in --trusted-proxies, failed attempts are counted
// by the client X-Forwarded-For names, not by the proxy's address: a client that guesses tokens until it gets
// 429 does not lock out another client of the same proxy. A peer that is not a trusted proxy cannot dodge
// the limit by writing the header itself. It holds with --trusted-proxies alone (token auth behind a plain
// proxy) and with an SSO header configured too.
func TestForwardedClientFromTrustedProxy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"proxies only", []string{"--trusted-proxies", "127.0.0.1/32"}},
		{"with a user header", []string{"--trusted-proxies", "127.0.0.1/32", "--trusted-user-header", "X-Forwarded-User"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, append([]string{"--token", testToken, "--rate-limit", "0"}, tc.flags...)...)
			proxy := clientFrom(t, "127.0.0.1")
			url := g.base + "/v1/sessions"
			bad := map[string]string{"Authorization": "Bearer wrong", "X-Forwarded-For": "198.51.100.7"}
			limited := false
			for i := 0; i < 40 && !limited; i++ {
				switch st := statusFrom(t, proxy, url, bad); st {
				case http.StatusUnauthorized:
				case http.StatusTooManyRequests:
					limited = true
				default:
					t.Fatalf("guess %d: %d", i, st)
				}
			}
			if !limited {
				t.Fatal("40 wrong tokens from one client were never limited")
			}
			good := map[string]string{"Authorization": "Bearer " + testToken, "X-Forwarded-For": "198.51.100.8"}
			if st := statusFrom(t, proxy, url, good); st != http.StatusOK {
				t.Fatalf("another client of the same proxy, with the right token: %d, want 200\n%s", st, g.logs.String())
			}
			// The guessing client stays limited, whatever it writes into the header before the proxy's hop.
			spoof := map[string]string{"Authorization": "Bearer " + testToken, "X-Forwarded-For": "203.0.113.1, 198.51.100.7"}
			if st := statusFrom(t, proxy, url, spoof); st != http.StatusTooManyRequests {
				t.Fatalf("the limited client behind a spoofed hop: %d, want 429", st)
			}
			// A peer that is not a trusted proxy is judged by its own address: a header it writes changes nothing.
			direct := clientFrom(t, "127.0.0.2")
			for i := 0; i < 40; i++ {
				hdr := map[string]string{"Authorization": "Bearer wrong", "X-Forwarded-For": "192.0.2." + itoa(i+1)}
				if st := statusFrom(t, direct, url, hdr); st == http.StatusTooManyRequests {
					return
				}
			}
			t.Fatal("an untrusted peer escaped the failure limit by rotating X-Forwarded-For")
		})
	}
}

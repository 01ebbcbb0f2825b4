package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// upgradeHeaders are what a browser sends to open a WebSocket, plus extra.
func upgradeHeaders(extra map[string]string) map[string]string {
	h := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	return mergeHdr(h, extra)
}

func (g *gateway) port() string {
	u, err := url.Parse(g.base)
	if err != nil {
		g.t.Fatal(err)
	}
	return u.Port()
}

// TestDNSRebindingRefused plays a page on a rebinding domain (its name resolves to 127.0.0.1): its requests
// carry the attacker's name in Host and a matching, same-origin Origin. Without a token only loopback names
// are served, on every route including the WebSockets; the probes stay open.
func TestDNSRebindingRefused(t *testing.T) {
	g := startGateway(t)
	evil := "rebind.attacker.example:" + g.port()
	attacker := map[string]string{"Host": evil, "Origin": "http://" + evil, "Sec-Fetch-Site": "same-origin"}
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
	}{
		{"create session", "POST", "/v1/sessions", attacker},
		{"list sessions", "GET", "/v1/sessions", attacker},
		{"no Origin at all", "GET", "/v1/agents", map[string]string{"Host": evil}},
		{"UI", "GET", "/", attacker},
		{"acp upgrade", "GET", "/acp", upgradeHeaders(attacker)},
		{"session ws upgrade", "GET", "/v1/sessions/any/ws", upgradeHeaders(attacker)},
		{"event stream", "GET", "/v1/sessions/any/events", mergeHdr(attacker, map[string]string{"Accept": "text/event-stream"})},
		{"empty Host", "GET", "/v1/agents", map[string]string{"Host": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "empty Host" {
				// net/http fills an empty Host from the URL: send the request line by hand.
				st, code := rawStatus(t, g, "GET /v1/agents HTTP/1.0\r\n\r\n")
				if st != 403 || code != "misdirected_host" {
					t.Fatalf("got %d %q", st, code)
				}
				return
			}
			st, code, body := g.request(c.method, c.path, []byte("{}"), c.hdr)
			if st != 403 || code != "misdirected_host" {
				t.Fatalf("got %d %q: %s", st, code, truncateStr(body, 200))
			}
		})
	}
	if st, _, _ := g.request("GET", "/healthz", nil, attacker); st != 200 {
		t.Fatalf("healthz with a foreign Host: %d", st)
	}
	for _, host := range []string{"localhost:" + g.port(), "app.localhost:" + g.port(), "127.0.0.2:" + g.port(), "[::1]:" + g.port()} {
		if st, _, body := g.request("GET", "/v1/agents", nil, map[string]string{"Host": host}); st != 200 {
			t.Fatalf("Host %s: %d %s", host, st, body)
		}
	}
	var list struct{ Sessions []sessionJSON }
	g.do("GET", "/v1/sessions", nil, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("the attacker created %d sessions", len(list.Sessions))
	}
}

// TestAllowedHosts: --allowed-hosts adds names; with a token any Host is served unless it is set.
func TestAllowedHosts(t *testing.T) {
	g := startGateway(t, "--allowed-hosts", "gateway.lan, *.corp.example:"+"*")
	for host, want := range map[string]int{"gateway.lan": 200, "gateway.lan:" + g.port(): 200, "x.corp.example:1": 200, "corp.example": 403, "other.lan": 403} {
		if st, _, _ := g.request("GET", "/v1/agents", nil, map[string]string{"Host": host}); st != want {
			t.Errorf("Host %s: %d, want %d", host, st, want)
		}
	}
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	tg := startGateway(t, "--token", testToken)
	if st, _, _ := tg.request("GET", "/v1/agents", nil, mergeHdr(bearer, map[string]string{"Host": "gateway.example"})); st != 200 {
		t.Fatalf("token mode, any Host: %d", st)
	}
	tg2 := startGateway(t, "--token", testToken, "--allowed-hosts", "gateway.example")
	if st, code, _ := tg2.request("GET", "/v1/agents", nil, mergeHdr(bearer, map[string]string{"Host": "other.example"})); st != 403 || code != "misdirected_host" {
		t.Fatalf("token mode with --allowed-hosts, other Host: %d %q", st, code)
	}
}

// TestOriginPolicy: one policy on every route. Foreign origins may not change state or open a WebSocket
// (on /ws and /acp alike), listed origins get CORS headers, and browsers' Sec-Fetch-Site is believed.
func TestOriginPolicy(t *testing.T) {
	g := startGateway(t, "--allowed-origins", "localhost:5173,*.dev.example")
	s := g.createSession(nil)
	foreign := map[string]string{"Origin": "https://evil.example"}
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"foreign POST", "POST", "/v1/sessions", foreign, 403},
		{"foreign DELETE", "DELETE", "/v1/sessions/" + s.ID, foreign, 403},
		{"cross-site fetch without Origin", "POST", "/v1/sessions", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"foreign ws upgrade", "GET", "/v1/sessions/" + s.ID + "/ws", upgradeHeaders(foreign), 403},
		{"foreign acp upgrade", "GET", "/acp", upgradeHeaders(foreign), 403},
		{"foreign acp/agent upgrade", "GET", "/acp/demo", upgradeHeaders(foreign), 403},
		{"foreign preflight", "OPTIONS", "/v1/sessions", mergeHdr(foreign, map[string]string{"Access-Control-Request-Method": "POST"}), 403},
		{"listed acp upgrade", "GET", "/acp", upgradeHeaders(map[string]string{"Origin": "http://localhost:5173"}), 101},
		{"wildcard ws upgrade", "GET", "/v1/sessions/" + s.ID + "/ws", upgradeHeaders(map[string]string{"Origin": "https://a.dev.example"}), 101},
		{"same-origin acp upgrade", "GET", "/acp", upgradeHeaders(map[string]string{"Origin": g.base}), 101},
		{"foreign GET reads without CORS", "GET", "/v1/agents", foreign, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, code, body := g.request(c.method, c.path, nil, c.hdr)
			if st != c.status || st == 403 && code != "forbidden_origin" {
				t.Fatalf("got %d %q, want %d: %s", st, code, c.status, truncateStr(body, 200))
			}
		})
	}
	resp := g.rawResponse("POST", "/v1/sessions", map[string]string{"Origin": "http://localhost:5173"})
	if resp.StatusCode != 201 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Fatalf("listed origin: %d, ACAO %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if resp := g.rawResponse("GET", "/v1/agents", foreign); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign origin got CORS headers: %v", resp.Header)
	}
}

// rawResponse sends a bodyless request and returns the response with its body drained.
func (g *gateway) rawResponse(method, path string, hdr map[string]string) *http.Response {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.base+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// rawStatus writes a hand-made request on a fresh connection and returns the answer's status and problem code.
func rawStatus(t *testing.T, g *gateway, request string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", g.base[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&p)
	return resp.StatusCode, p.Code
}

package main

import (
	"encoding/json"
	"testing"
)

// ticketFor mints a ticket with the bearer token; body binds it (or not) to a session.
func (g *gateway) ticketFor(body string) string {
	g.t.Helper()
	st, _, tb := g.request("POST", "/v1/ws-tickets", []byte(body), map[string]string{"Authorization": "Bearer " + testToken})
	var tk struct{ Ticket, SessionID string }
	if err := json.Unmarshal([]byte(tb), &tk); st != 201 || err != nil || tk.Ticket == "" {
		g.t.Fatalf("ticket: %d %s", st, tb)
	}
	return tk.Ticket
}

// TestTicketsOnlyOpenStreams: a WebSocket ticket (and the bearer subprotocol) is a credential for the GET
// stream routes only, never for the rest of the API; a ticket bound to a session opens only that session's
// streams; a refused use elsewhere does not burn it.
func TestTicketsOnlyOpenStreams(t *testing.T) {
	g := startGateway(t, "--token", testToken, "--rate-limit", "0")
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	a, b := g.createSessionWith(bearer), g.createSessionWith(bearer)
	sse := map[string]string{"Accept": "text/event-stream"}

	tk := g.ticketFor("")
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
	}{
		{"create a session as an event stream", "POST", "/v1/sessions?ticket=" + tk, sse},
		{"create a session as an upgrade", "POST", "/v1/sessions?ticket=" + tk, upgradeHeaders(nil)},
		{"mint a ticket", "POST", "/v1/ws-tickets?ticket=" + tk, sse},
		{"list sessions", "GET", "/v1/sessions?ticket=" + tk, sse},
		{"delete a session", "DELETE", "/v1/sessions/" + a + "?ticket=" + tk, sse},
		{"prompt", "POST", "/v1/sessions/" + a + "/prompt?ticket=" + tk, upgradeHeaders(nil)},
		{"bearer subprotocol without upgrade", "GET", "/v1/sessions", mergeHdr(sse, map[string]string{"Sec-WebSocket-Protocol": "acp-gateway.v1, bearer." + testToken})},
		{"bearer subprotocol on a POST upgrade", "POST", "/v1/sessions", upgradeHeaders(map[string]string{"Sec-WebSocket-Protocol": "acp-gateway.v1, bearer." + testToken})},
	} {
		t.Run(c.name, func(t *testing.T) {
			if st, code, body := g.request(c.method, c.path, []byte("{}"), c.hdr); st != 401 || code != "unauthorized" {
				t.Fatalf("got %d %q: %s", st, code, truncateStr(body, 200))
			}
		})
	}
	// Refused uses did not burn it: it still opens a stream, once.
	if st, _, _ := g.request("GET", "/acp?ticket="+tk, nil, upgradeHeaders(nil)); st != 101 {
		t.Fatalf("unbound ticket on /acp: %d", st)
	}
	if st, _, _ := g.request("GET", "/acp?ticket="+tk, nil, upgradeHeaders(nil)); st != 401 {
		t.Fatalf("reused ticket: %d", st)
	}
	if resp := g.rawResponse("GET", "/v1/sessions/"+a+"/events?ticket="+g.ticketFor(""), sse); resp.StatusCode != 200 {
		t.Fatalf("unbound ticket on SSE: %d", resp.StatusCode)
	}

	bound := `{"sessionId":"` + a + `"}`
	if st, _, _ := g.request("GET", "/v1/sessions/"+b+"/ws?ticket="+g.ticketFor(bound), nil, upgradeHeaders(nil)); st != 401 {
		t.Fatalf("ticket bound to a, used for b: %d", st)
	}
	if st, _, _ := g.request("GET", "/acp?ticket="+g.ticketFor(bound), nil, upgradeHeaders(nil)); st != 401 {
		t.Fatalf("bound ticket on /acp: %d", st)
	}
	if st, _, _ := g.request("GET", "/v1/sessions/"+a+"/ws?ticket="+g.ticketFor(bound), nil, upgradeHeaders(nil)); st != 101 {
		t.Fatalf("bound ticket on its session's ws: %d", st)
	}
	if resp := g.rawResponse("GET", "/v1/sessions/"+a+"/events?ticket="+g.ticketFor(bound), sse); resp.StatusCode != 200 {
		t.Fatalf("bound ticket on its session's SSE: %d", resp.StatusCode)
	}
	if st, code, _ := g.request("POST", "/v1/ws-tickets", []byte(`{"sessionId":"nope"}`), bearer); st != 404 || code != "session_not_found" {
		t.Fatalf("ticket for an unknown session: %d %q", st, code)
	}
}

// createSessionWith creates a demo session with the given headers and returns its id.
func (g *gateway) createSessionWith(hdr map[string]string) string {
	g.t.Helper()
	st, _, body := g.request("POST", "/v1/sessions", []byte(`{}`), hdr)
	var s sessionJSON
	if err := json.Unmarshal([]byte(body), &s); st != 201 || err != nil {
		g.t.Fatalf("create: %d %s", st, body)
	}
	return s.ID
}

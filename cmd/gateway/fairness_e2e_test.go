package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// meAs sends GET /v1/me as user on the keep-alive connection and returns the status and problem code.
func (rc *rawConn) meAs(user string) (int, string) {
	rc.t.Helper()
	rc.write("GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + tokenOf(user) + "\r\n\r\n")
	resp, code := rc.response()
	return resp.StatusCode, code
}

// TestOneUserCannotHoldEveryConnection is the descriptor exhaustion: a user opening keep-alive
// connections with one GET /v1/me each. Past the per-user cap (64 by default) each new connection closes
// that user's oldest idle one, so the user never holds more than the cap, and another user is served.
func TestOneUserCannotHoldEveryConnection(t *testing.T) {
	g, _ := startWithUsers(t)
	const opened = 80
	conns := make([]*rawConn, opened)
	for i := range conns {
		conns[i] = g.rawDial()
		if st, code := conns[i].meAs("bob"); st != http.StatusOK {
			t.Fatalf("bob's connection %d: %d %s", i, st, code)
		}
	}
	// The first opened-64 were the oldest idle ones when the later ones came: they were closed, in order.
	for i, c := range conns[:opened-64] {
		if !c.closedByPeer() {
			t.Fatalf("bob's connection %d of %d is still open: a user holds more than 64", i, opened)
		}
	}
	// The newest 64 are still served on their connections.
	if st, code := conns[opened-1].meAs("bob"); st != http.StatusOK {
		t.Fatalf("bob's newest connection: %d %s", st, code)
	}
	ann := g.rawDial()
	if st, code := ann.meAs("ann"); st != http.StatusOK {
		t.Fatalf("ann beside bob's connections: %d %s", st, code)
	}
}

// TestUserConnectionsBusyAreRefused: when none of a user's connections at the cap is idle (each carries an
// open WebSocket), a new one is refused with 429 too_many_user_connections and closed; admins are not held
// to the cap.
func TestUserConnectionsBusyAreRefused(t *testing.T) {
	g, _ := startWithUsers(t, "--max-conns-per-user", "2")
	for range 2 {
		g.dialAs("/v1/sessions/"+g.createSessionWith(as("bob"))+"/ws", as("bob"))
	}
	c := g.rawDial()
	st, code := c.meAs("bob")
	if st != http.StatusTooManyRequests || code != "too_many_user_connections" {
		t.Fatalf("bob's third connection beside two WebSockets: %d %s, want 429 too_many_user_connections", st, code)
	}
	if !c.closedByPeer() {
		t.Fatal("the refused connection stayed open")
	}
	for i := range 3 {
		if st, code := g.rawDial().meAs("root"); st != http.StatusOK {
			t.Fatalf("admin connection %d: %d %s", i, st, code)
		}
	}
}

// TestOneUserCannotTakeEveryACPConnection: one user may hold at most their share of --max-acp-conns (32 by
// default): past it /acp is refused with 429 too_many_user_connections while another user still connects.
func TestOneUserCannotTakeEveryACPConnection(t *testing.T) {
	g, _ := startWithUsers(t)
	for range 32 {
		dialACPAs(t, g, as("bob"))
	}
	if st, code, _ := g.request("GET", "/acp", nil, map[string]string{
		"Authorization": "Bearer " + tokenOf("bob"), "Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
	}); st != http.StatusTooManyRequests || code != "too_many_user_connections" {
		t.Fatalf("bob's 33rd /acp socket: %d %s, want 429 too_many_user_connections", st, code)
	}
	if st, code, body := g.request("POST", "/acp", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`),
		map[string]string{"Authorization": "Bearer " + tokenOf("bob"), "Content-Type": "application/json"}); st != http.StatusTooManyRequests || code != "too_many_user_connections" {
		t.Fatalf("bob's Streamable HTTP connection past his share: %d %s %s", st, code, body)
	}
	dialACPAs(t, g, as("ann"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, g.wsURL("/acp"), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tokenOf("root")}}})
	if err != nil {
		t.Fatalf("an admin past bob's share: %v", err)
	}
	c.CloseNow()
}

// TestSessionsPerUserDefault: without --max-sessions-per-user a user has at most 16 sessions at once.
func TestSessionsPerUserDefault(t *testing.T) {
	g, _ := startWithUsers(t)
	for range 16 {
		g.createSessionWith(as("bob"))
	}
	if st, code, _ := g.request("POST", "/v1/sessions", []byte(`{}`), as("bob")); st != http.StatusServiceUnavailable || code != "too_many_sessions" {
		t.Fatalf("bob's 17th session: %d %s, want 503 too_many_sessions", st, code)
	}
	g.createSessionWith(as("ann"))
}

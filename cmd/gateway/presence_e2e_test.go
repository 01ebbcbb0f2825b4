package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal/oidcprovider"
	"github.com/coder/websocket"
)

// watchersOf decodes a `_gateway/presence` frame's watchers as "principal:role:faces" strings.
func watchersOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var f struct {
		Params struct {
			Watchers []struct {
				Principal, Name, Role string
				Faces                 int
			} `json:"watchers"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("presence: %v: %s", err, raw)
	}
	out := []string{}
	for _, w := range f.Params.Watchers {
		out = append(out, w.Principal+":"+w.Role+":"+itoa(w.Faces))
	}
	return out
}

// presenceIs matches a `_gateway/presence` frame listing exactly want.
func presenceIs(t *testing.T, want ...string) func(f frame) bool {
	return func(f frame) bool {
		return f.Method == "_gateway/presence" && slices.Equal(watchersOf(t, f.Raw), want)
	}
}

// detailWatchers is the `watchers` of `GET /v1/sessions/{id}` as "principal:role:faces".
func detailWatchers(t *testing.T, g *gateway, sid string, hdr map[string]string) []string {
	t.Helper()
	st, _, body := g.request("GET", "/v1/sessions/"+sid, nil, hdr)
	if st != 200 {
		t.Fatalf("detail: %d %s", st, body)
	}
	return watchersOf(t, json.RawMessage(`{"params":`+body+`}`))
}

// TestPresenceShowsWhoWatches: ann watches her session; bob, a viewer, opens a socket and an /acp
// connection on it: ann's socket gets `_gateway/presence` with both (bob with 2 faces), the detail lists
// them, and when bob leaves ann sees him go. Frames are not logged: the seq does not move.
func TestPresenceShowsWhoWatches(t *testing.T) {
	cwd := t.TempDir()
	g, _ := startWithUsers(t, "--workdir", cwd)
	sid := g.createSessionWith(as("ann"))
	if st, _, body := g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"viewer"}`), as("ann")); st != 200 {
		t.Fatalf("share: %d %s", st, body)
	}
	annWS := g.dialAs("/v1/sessions/"+sid+"/ws", as("ann"))
	annWS.waitFor("ann alone", presenceIs(t, "ann:owner:1"))
	// The demo agent sends its commands after answering session/new: wait for that frame, so the log's head
	// below can only move by presence.
	annWS.waitFor("the demo agent's commands", func(f frame) bool { return f.updateKind() == "available_commands_update" })
	_, _, before := g.request("GET", "/v1/sessions/"+sid, nil, as("ann"))
	var v0 struct{ LastSeq uint64 }
	_ = json.Unmarshal([]byte(before), &v0)

	bobWS := g.dialAs("/v1/sessions/"+sid+"/ws", as("bob"))
	bobWS.waitFor("bob's own presence", presenceIs(t, "ann:owner:1", "bob:viewer:1"))
	rc := dialACPAs(t, g, as("bob"))
	if r := rc.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); r.Error != nil {
		t.Fatalf("bob loads over /acp: %+v", r.Error)
	}
	annWS.waitFor("bob on two faces", presenceIs(t, "ann:owner:1", "bob:viewer:2"))
	if got := detailWatchers(t, g, sid, as("bob")); !slices.Equal(got, []string{"ann:owner:1", "bob:viewer:2"}) {
		t.Fatalf("detail watchers: %v", got)
	}
	_, _, after := g.request("GET", "/v1/sessions/"+sid, nil, as("ann"))
	var v1 struct{ LastSeq uint64 }
	_ = json.Unmarshal([]byte(after), &v1)
	if v1.LastSeq != v0.LastSeq {
		t.Fatalf("presence moved the log: lastSeq %d -> %d", v0.LastSeq, v1.LastSeq)
	}
	for _, f := range annWS.snapshot() {
		if f.Method == "_gateway/presence" && f.Params.Meta.Gateway.Seq != 0 {
			t.Fatalf("a presence frame with a seq: %s", f.Raw)
		}
	}

	bobWS.c.Close(websocket.StatusNormalClosure, "")
	rc.c.Close(websocket.StatusNormalClosure, "")
	annWS.waitFor("bob gone", afterPresence(t, "ann:owner:1", "bob:viewer:2"))
}

// afterPresence matches a presence frame of ann alone that follows one listing before (waitFor scans the
// frames in order).
func afterPresence(t *testing.T, before ...string) func(f frame) bool {
	seen := false
	return func(f frame) bool {
		if presenceIs(t, before...)(f) {
			seen = true
		}
		return seen && presenceIs(t, "ann:owner:1")(f)
	}
}

// presences lists the presence frames received so far.
func (w *wsClient) presences(t *testing.T) [][]string {
	var out [][]string
	for _, f := range w.snapshot() {
		if f.Method == "_gateway/presence" {
			out = append(out, watchersOf(t, f.Raw))
		}
	}
	return out
}

// TestPresenceStormIsCoalesced: 20 sockets of bob open, then close: ann's socket sees bob with 20 faces and
// then alone again, in fewer presence frames than the 40 changes (the exact coalescing, per 500 ms, is
// TestPresenceCoalesced in internal/sessions, on fake time).
func TestPresenceStormIsCoalesced(t *testing.T) {
	g, _ := startWithUsers(t)
	sid := g.createSessionWith(as("ann"))
	g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"collaborator"}`), as("ann"))
	annWS := g.dialAs("/v1/sessions/"+sid+"/ws", as("ann"))
	annWS.waitFor("ann alone", presenceIs(t, "ann:owner:1"))
	var socks []*wsClient
	for range 20 {
		socks = append(socks, g.dialAs("/v1/sessions/"+sid+"/ws", as("bob")))
	}
	annWS.waitFor("bob's 20 sockets", presenceIs(t, "ann:owner:1", "bob:collaborator:20"))
	for _, s := range socks {
		s.c.Close(websocket.StatusNormalClosure, "")
	}
	annWS.waitFor("bob gone", afterPresence(t, "ann:owner:1", "bob:collaborator:20"))
	if n := len(annWS.presences(t)); n >= 20 {
		t.Fatalf("%d presence frames for 40 changes: not coalesced", n)
	} else {
		t.Logf("%d presence frames for 40 changes", n)
	}
}

// TestUnshareEndsStreamsOnEveryFace: ann ends bob's share while bob streams her session on a WebSocket, an
// event stream and an /acp socket: the WebSocket closes with 4004 (session not found), the event stream ends,
// and the /acp socket stays open but answers -32002 for the session. A downgrade to viewer keeps bob's view
// but stops his prompts.
func TestUnshareEndsStreamsOnEveryFace(t *testing.T) {
	cwd := t.TempDir()
	g, _ := startWithUsers(t, "--workdir", cwd)
	sid := g.createSessionWith(as("ann"))
	share := "/v1/sessions/" + sid + "/shares/bob"
	g.request("PUT", share, []byte(`{"role":"collaborator"}`), as("ann"))
	bobWS := g.dialAs("/v1/sessions/"+sid+"/ws", as("bob"))
	bobWS.waitFor("bob's replay", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	rc := dialACPAs(t, g, as("bob"))
	if r := rc.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); r.Error != nil {
		t.Fatalf("bob loads over /acp: %+v", r.Error)
	}
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "quick"}}}
	if r := rc.call("session/prompt", prompt); r.Error != nil {
		t.Fatalf("collaborator prompts over /acp: %+v", r.Error)
	}

	// Downgraded: still watching, no longer acting.
	g.request("PUT", share, []byte(`{"role":"viewer"}`), as("ann"))
	if r := rc.call("session/prompt", prompt); r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("viewer prompts over /acp after the downgrade: %+v", r)
	}
	if st, code, _ := g.request("POST", "/v1/sessions/"+sid+"/prompt", []byte(`{"text":"hi"}`), as("bob")); st != 403 || code != "forbidden" {
		t.Fatalf("viewer prompts over REST after the downgrade: %d %s", st, code)
	}
	bobSSE := g.openSSE(t, "/v1/sessions/"+sid+"/events", as("bob"))
	var started struct{ TurnID string }
	_, _, body := g.request("POST", "/v1/sessions/"+sid+"/prompt", []byte(`{"text":"quick"}`), as("ann"))
	_ = json.Unmarshal([]byte(body), &started)
	bobWS.waitFor("ann's turn on the downgraded socket", turnEnded(started.TurnID))

	// Unshared: every stream of bob's on the session ends.
	if st, _, _ := g.request("DELETE", share, nil, as("ann")); st != 204 {
		t.Fatalf("unshare: %d", st)
	}
	if code := bobWS.waitClosed(); code != 4004 || bobWS.closeReason() != "session not found" {
		t.Fatalf("bob's WebSocket closed %d %q, want 4004 session not found", code, bobWS.closeReason())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ended := false; !ended; {
		select {
		case _, open := <-bobSSE.ch:
			ended = !open
		case <-ctx.Done():
			t.Fatal("bob's event stream did not end")
		}
	}
	if r := rc.call("session/prompt", prompt); r.Error == nil || r.Error.Code != -32002 {
		t.Fatalf("bob prompts over /acp after the unshare: %+v, want -32002", r)
	}
	if r := rc.call("session/list", map[string]any{}); r.Error != nil || slices.Contains(sessionIDs(r.Result), sid) {
		t.Fatalf("bob's /acp list after the unshare: %+v", r)
	}
	// ann's own socket saw bob leave.
	annWS := g.dialAs("/v1/sessions/"+sid+"/ws", as("ann"))
	annWS.waitFor("ann alone", presenceIs(t, "ann:owner:1"))
}

// TestMe: `GET /v1/me` names the caller and how they were identified, on each way of identifying callers.
func TestMe(t *testing.T) {
	me := func(g *gateway, hdr map[string]string) map[string]any {
		t.Helper()
		st, _, body := g.request("GET", "/v1/me", nil, hdr)
		var m map[string]any
		if st != 200 || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("me: %d %s", st, body)
		}
		delete(m, "expiresAt")
		b, _ := json.Marshal(m)
		return map[string]any{"json": string(b)}
	}
	check := func(what string, got map[string]any, want string) {
		t.Helper()
		if got["json"] != want {
			t.Errorf("%s: %s, want %s", what, got["json"], want)
		}
	}
	open := startGateway(t)
	check("no auth", me(open, nil), `{"id":"anonymous","name":"anonymous","role":"admin","via":"none"}`)
	tok := startGateway(t, "--token", testToken)
	check("token", me(tok, map[string]string{"Authorization": "Bearer " + testToken}), `{"id":"admin","name":"admin","role":"admin","via":"token"}`)
	if st, code, _ := tok.request("GET", "/v1/me", nil, nil); st != 401 || code != "unauthorized" {
		t.Errorf("me without credentials: %d %s", st, code)
	}
	users, _ := startWithUsers(t, "--max-sessions-per-user", "3")
	users.createSessionWith(as("ann"))
	check("users file", me(users, as("ann")), `{"id":"ann","name":"ann","role":"user","sessionCap":{"max":3,"used":1},"via":"users"}`)
	check("users file admin", me(users, as("root")), `{"id":"root","name":"root","role":"admin","via":"users"}`)
	proxy := startGateway(t, "--trusted-user-header", "X-Forwarded-User", "--trusted-proxies", "127.0.0.1/32,::1", "--rate-limit", "0")
	check("proxy", me(proxy, map[string]string{"X-Forwarded-User": "carol"}), `{"id":"carol","name":"carol","role":"user","sessionCap":{"max":16,"used":0},"via":"proxy"}`)
	p := startOIDC(t)
	oidc := startGateway(t, "--oidc-issuer", p.Issuer, "--oidc-audience", "gateway", "--rate-limit", "0")
	hdr := map[string]string{"Authorization": "Bearer " + p.Sign(p.Claims("sub-ann", "gateway", time.Hour, map[string]any{"name": "Ann"}))}
	check("oidc", me(oidc, hdr), `{"id":"oidc:sub-ann","name":"Ann","role":"user","sessionCap":{"max":16,"used":0},"via":"oidc"}`)
	st, _, body := oidc.request("GET", "/v1/me", nil, hdr)
	if st != 200 || !strings.Contains(body, `"expiresAt":"`) {
		t.Errorf("oidc me has no expiresAt: %s", body)
	}
}

// startOIDC runs a local OIDC provider for the test.
func startOIDC(t *testing.T) *oidcprovider.Provider {
	p := oidcprovider.Start()
	t.Cleanup(p.Close)
	return p
}

// TestOIDCExpiryClosesSockets: a session WebSocket and an /acp socket opened with an OIDC token close with
// 1008 "credentials expired" when the token expires, and its event stream ends. The token lives a few
// seconds: the test waits for the closes (bounded), it does not time them.
func TestOIDCExpiryClosesSockets(t *testing.T) {
	p := startOIDC(t)
	g := startGateway(t, "--oidc-issuer", p.Issuer, "--oidc-audience", "gateway", "--rate-limit", "0")
	long := map[string]string{"Authorization": "Bearer " + p.Sign(p.Claims("sub-ann", "gateway", time.Hour, nil))}
	sid := g.createSessionWith(long)
	short := map[string]string{"Authorization": "Bearer " + p.Sign(p.Claims("sub-ann", "gateway", 5*time.Second, nil))}
	ws := g.dialAs("/v1/sessions/"+sid+"/ws", short)
	ws.waitFor("replay", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	rc := dialACPAs(t, g, short)
	sse := g.openSSE(t, "/v1/sessions/"+sid+"/events", short)
	if code := ws.waitClosed(); code != websocket.StatusPolicyViolation || ws.closeReason() != "credentials expired" {
		t.Fatalf("WebSocket closed %d %q, want 1008 credentials expired", code, ws.closeReason())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, _, err := rc.c.Read(ctx); err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "credentials expired" {
				t.Fatalf("/acp socket ended with %v, want 1008 credentials expired", err)
			}
			break
		}
	}
	for ended := false; !ended; {
		select {
		case _, open := <-sse.ch:
			ended = !open
		case <-ctx.Done():
			t.Fatal("the event stream did not end")
		}
	}
	// The long-lived token's socket is not affected.
	if st, _, _ := g.request("GET", "/v1/sessions/"+sid, nil, long); st != 200 {
		t.Fatalf("the long token: %d", st)
	}
}

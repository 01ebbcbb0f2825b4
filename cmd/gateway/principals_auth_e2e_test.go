package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal/oidcprovider"
	"github.com/coder/websocket"
)

// TestRevokedUserLosesOpenSockets: ann is removed from the users file and the gateway gets SIGHUP: her
// session WebSocket and her `/acp` socket close with 1008, her event stream ends and her token is refused;
// bob's socket stays open and live through the reload.
func TestRevokedUserLosesOpenSockets(t *testing.T) {
	g, file := startWithUsers(t)
	annSession, bobSession := g.createSessionWith(as("ann")), g.createSessionWith(as("bob"))
	annWS := g.dialAs("/v1/sessions/"+annSession+"/ws", as("ann"))
	annWS.waitFor("ann's replay", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	annACP := dialACPAs(t, g, as("ann"))
	annSSE := g.openSSE(t, "/v1/sessions/"+annSession+"/events", as("ann"))
	bobWS := g.dialAs("/v1/sessions/"+bobSession+"/ws", as("bob"))
	bobWS.waitFor("bob's replay", func(f frame) bool { return f.Method == "_gateway/replay_complete" })

	writeUsersFile(t, file, testUser{"bob", "user"}, testUser{"root", "admin"})
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := annWS.waitClosed(); code != websocket.StatusPolicyViolation || annWS.closeReason() != "credentials revoked" {
		t.Fatalf("ann's WebSocket closed %d %q, want 1008 credentials revoked", code, annWS.closeReason())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, _, err := annACP.c.Read(ctx); err != nil {
			if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
				t.Fatalf("ann's /acp socket ended with %v (status %d), want 1008", err, st)
			}
			break
		}
	}
	for ended := false; !ended; {
		select {
		case _, open := <-annSSE.ch:
			ended = !open
		case <-ctx.Done():
			t.Fatal("ann's event stream did not end")
		}
	}
	if st, code, _ := g.request("GET", "/v1/sessions", nil, as("ann")); st != 401 || code != "unauthorized" {
		t.Fatalf("ann's token after the reload: %d %s", st, code)
	}
	// Bob's socket lived through the reload: his next turn streams on it.
	var started struct{ TurnID string }
	if st, _, body := g.request("POST", "/v1/sessions/"+bobSession+"/prompt", []byte(`{"text":"quick"}`), as("bob")); st != 202 {
		t.Fatalf("bob prompts: %d %s", st, body)
	} else {
		_ = json.Unmarshal([]byte(body), &started)
	}
	bobWS.waitFor("bob's turn on his socket", turnEnded(started.TurnID))
	if !strings.Contains(g.logs.String(), "users file reloaded") {
		t.Fatalf("no reload in the log:\n%s", g.logs.String())
	}
}

// TestBrokenUsersFileKeepsThePreviousOne: a reload of a file that does not parse is logged and changes
// nothing.
func TestBrokenUsersFileKeepsThePreviousOne(t *testing.T) {
	g, file := startWithUsers(t)
	if err := os.WriteFile(file, []byte(`{"users": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(g.logs.String(), "users file not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no failed reload in the log:\n%s", g.logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the log for an observable condition, bounded
	}
	if st, _, _ := g.request("GET", "/v1/sessions", nil, as("ann")); st != 200 {
		t.Fatalf("ann after a failed reload: %d", st)
	}
}

// TestTrustedHeaderOnlyFromTrustedProxies: X-Forwarded-User from an address outside --trusted-proxies is
// ignored (and logged): the request stands on its credentials alone. From a trusted proxy it names the
// user, and users see only their own sessions.
func TestTrustedHeaderOnlyFromTrustedProxies(t *testing.T) {
	untrusted := startGateway(t, "--token", testToken, "--trusted-user-header", "X-Forwarded-User", "--trusted-proxies", "10.0.0.0/8", "--rate-limit", "0")
	if st, code, _ := untrusted.request("GET", "/v1/sessions", nil, map[string]string{"X-Forwarded-User": "ann"}); st != 401 || code != "unauthorized" {
		t.Fatalf("header from an untrusted address: %d %s", st, code)
	}
	if !strings.Contains(untrusted.logs.String(), "ignored a trusted-user header") {
		t.Fatalf("the ignored header was not logged:\n%s", untrusted.logs.String())
	}
	// With the token as well, the request is the token's (an admin), not ann's.
	both := mergeHdr(map[string]string{"X-Forwarded-User": "ann"}, map[string]string{"Authorization": "Bearer " + testToken})
	id := untrusted.createSessionWith(both)
	if st, _, _ := untrusted.request("GET", "/v1/sessions/"+id, nil, map[string]string{"Authorization": "Bearer " + testToken}); st != 200 {
		t.Fatalf("the token's own session: %d", st)
	}

	trusted := startGateway(t, "--trusted-user-header", "X-Forwarded-User", "--trusted-proxies", "127.0.0.1/32,::1", "--rate-limit", "0")
	ann, bob := map[string]string{"X-Forwarded-User": "ann"}, map[string]string{"X-Forwarded-User": "bob"}
	sid := trusted.createSessionWith(ann)
	if st, _, _ := trusted.request("GET", "/v1/sessions/"+sid, nil, ann); st != 200 {
		t.Fatalf("ann's own session: %d", st)
	}
	if st, code, _ := trusted.request("GET", "/v1/sessions/"+sid, nil, bob); st != 404 || code != "session_not_found" {
		t.Fatalf("bob on ann's session: %d %s", st, code)
	}
	if st, code, _ := trusted.request("GET", "/v1/sessions", nil, nil); st != 401 || code != "unauthorized" {
		t.Fatalf("no header from the proxy: %d %s", st, code)
	}
}

// TestOIDCBearerTokens: JWTs of a local OIDC provider (discovery and JWKS over HTTP) identify principals;
// expired, wrong-audience, wrong-issuer, wrong-key and unsigned tokens get 401.
func TestOIDCBearerTokens(t *testing.T) {
	p := oidcprovider.Start()
	t.Cleanup(p.Close)
	other := oidcprovider.Start()
	t.Cleanup(other.Close)
	g := startGateway(t, "--oidc-issuer", p.Issuer, "--oidc-audience", "gateway", "--rate-limit", "0")
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	ann := bearer(p.Sign(p.Claims("sub-ann", "gateway", time.Hour, map[string]any{"name": "Ann"})))
	bob := bearer(p.Sign(p.Claims("sub-bob", "gateway", time.Hour, nil)))
	sid := g.createSessionWith(ann)
	if st, code, _ := g.request("GET", "/v1/sessions/"+sid, nil, bob); st != 404 || code != "session_not_found" {
		t.Fatalf("bob on ann's session: %d %s", st, code)
	}
	for name, tok := range map[string]string{
		"expired":        p.Sign(p.Claims("sub-ann", "gateway", -time.Minute, nil)),
		"wrong audience": p.Sign(p.Claims("sub-ann", "another-service", time.Hour, nil)),
		"wrong issuer":   other.Sign(other.Claims("sub-ann", "gateway", time.Hour, nil)),
		"wrong key":      oidcprovider.SignWith(oidcprovider.NewKey(), "key-b", p.Claims("sub-ann", "gateway", time.Hour, nil)),
		"alg none":       oidcprovider.Unsigned(p.Claims("sub-ann", "gateway", time.Hour, nil)),
	} {
		if st, code, _ := g.request("GET", "/v1/sessions", nil, bearer(tok)); st != 401 || code != "unauthorized" {
			t.Errorf("%s token: %d %s", name, st, code)
		}
	}
}

// TestSessionsPerUserCap: --max-sessions-per-user bounds each user apart; admins are bound only by
// --max-sessions.
func TestSessionsPerUserCap(t *testing.T) {
	g, _ := startWithUsers(t, "--max-sessions-per-user", "1")
	g.createSessionWith(as("ann"))
	if st, code, _ := g.request("POST", "/v1/sessions", []byte(`{}`), as("ann")); st != 503 || code != "too_many_sessions" {
		t.Fatalf("ann's second session: %d %s", st, code)
	}
	g.createSessionWith(as("bob"))
	g.createSessionWith(as("root"))
	g.createSessionWith(as("root"))
}

// actorOf is the actor a `_gateway/*` frame names.
func actorOf(t *testing.T, f frame) (by, who, name string) {
	t.Helper()
	var m struct {
		Params struct {
			By    string `json:"by"`
			Actor struct {
				Principal string `json:"principal"`
				Name      string `json:"name"`
			} `json:"actor"`
		} `json:"params"`
	}
	if err := json.Unmarshal(f.Raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Params.By, m.Params.Actor.Principal, m.Params.Actor.Name
}

// TestAuditNamesThePrincipal: the prompt's turn_started and every permission_resolved name who acted (an
// admin answering ann's request; ann's policy answering for her), and each action is an audit=true log line.
func TestAuditNamesThePrincipal(t *testing.T) {
	g, _ := startWithUsers(t)
	sid := g.createSessionWith(as("ann"))
	w := g.dialAs("/v1/sessions/"+sid+"/ws", as("ann"))
	var started struct{ TurnID string }
	_, _, body := g.request("POST", "/v1/sessions/"+sid+"/prompt", []byte(`{"text":"edit please"}`), as("ann"))
	_ = json.Unmarshal([]byte(body), &started)
	ts, _ := w.waitFor("turn_started", func(f frame) bool { return f.Method == "_gateway/turn_started" })
	if _, who, name := actorOf(t, ts); who != "ann" || name != "ann" {
		t.Fatalf("turn_started %s", ts.Raw)
	}
	perm, _ := w.waitFor("permission", isPermissionRequest)
	if st, _, body := g.request("POST", "/v1/sessions/"+sid+"/permissions/"+permIDOf(perm), []byte(`{"optionId":"allow-once"}`), as("root")); st != 200 {
		t.Fatalf("root answers: %d %s", st, body)
	}
	res, _ := w.waitFor("permission_resolved", resolvedFor(permIDOf(perm)))
	if by, who, _ := actorOf(t, res); by != "rest" || who != "root" {
		t.Fatalf("permission_resolved %s", res.Raw)
	}
	w.waitFor("turn_ended", turnEnded(started.TurnID))

	st, _, body := g.request("POST", "/v1/sessions", []byte(`{"permissionPolicy":"approve-all"}`), as("ann"))
	var auto sessionJSON
	if err := json.Unmarshal([]byte(body), &auto); st != 201 || err != nil {
		t.Fatalf("create: %d %s", st, body)
	}
	aw := g.dialAs("/v1/sessions/"+auto.ID+"/ws", as("ann"))
	g.request("POST", "/v1/sessions/"+auto.ID+"/prompt", []byte(`{"text":"edit please"}`), as("ann"))
	res, _ = aw.waitFor("permission_resolved", func(f frame) bool { return f.Method == "_gateway/permission_resolved" })
	if by, who, _ := actorOf(t, res); by != "policy" || who != "ann" {
		t.Fatalf("policy answer %s", res.Raw)
	}
	if st, _, _ := g.request("DELETE", "/v1/sessions/"+sid, nil, as("ann")); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	want := map[string]bool{"prompt ann": false, "permission_answer root": false, "permission_answer ann": false, "close ann": false}
	for k := range want {
		action, who, _ := strings.Cut(k, " ")
		want[k] = containsAuditLine(g.logs.String(), action, who)
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("no audit line %q in the log:\n%s", k, g.logs.String())
		}
	}
}

// TestHashToken: what `gateway hash-token` prints, put in a users file, admits the token (and nothing else);
// what is no usable token is refused.
func TestHashToken(t *testing.T) {
	var out strings.Builder
	if err := hashToken(strings.NewReader("carol-token\n"), &out); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "users.json")
	entry := `{"users": [{"name": "carol", "role": "user", "tokenSha256": "` + strings.TrimSpace(out.String()) + `"}]}`
	if err := os.WriteFile(file, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--users", file, "--rate-limit", "0")
	if st, _, body := g.request("GET", "/v1/sessions", nil, as("carol")); st != 200 {
		t.Fatalf("carol's token: %d %s", st, body)
	}
	if st, _, _ := g.request("GET", "/v1/sessions", nil, map[string]string{"Authorization": "Bearer " + strings.TrimSpace(out.String())}); st != 401 {
		t.Fatalf("the hash itself as a token: %d", st)
	}
	for _, bad := range []string{"", "\n", "two\nlines\n", "with space\n"} {
		if err := hashToken(strings.NewReader(bad), io.Discard); err == nil {
			t.Errorf("hash-token accepted %q", bad)
		}
	}
}

// auditLineRE matches a session's audit log line (text format): action and principal.
var auditLineRE = regexp.MustCompile(` session=\S+ .*audit=true action=(\S+) principal=(\S+)`)

// containsAuditLine reports whether logs hold a session's audit line of action by principal who.
func containsAuditLine(logs, action, who string) bool {
	for _, line := range lines(logs) {
		if m := auditLineRE.FindStringSubmatch(line); m != nil && m[1] == action && m[2] == who {
			return true
		}
	}
	return false
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal/oidcprovider"
)

// TestProxyNamesCannotTakeOtherSourcesIDs: principal ids from each source live apart. A trusted proxy naming
// "oidc:alice" is not the OIDC principal alice, and one naming "admin" is not the single --token's admin: the
// header is ignored (the request stands on its credentials alone), so neither reaches those sessions. Names
// from the proxy and the users file stay one namespace: the proxy's "ann" is the users file's ann.
func TestProxyNamesCannotTakeOtherSourcesIDs(t *testing.T) {
	p := oidcprovider.Start()
	t.Cleanup(p.Close)
	users := filepath.Join(t.TempDir(), "users.json")
	writeUsersFile(t, users, testUser{"ann", "user"})
	g := startGateway(t, "--token", testToken, "--users", users, "--oidc-issuer", p.Issuer, "--oidc-audience", "gateway",
		"--trusted-user-header", "X-Forwarded-User", "--trusted-proxies", "127.0.0.1/32,::1", "--rate-limit", "0")
	alice := map[string]string{"Authorization": "Bearer " + p.Sign(p.Claims("alice", "gateway", time.Hour, nil))}
	admin := map[string]string{"Authorization": "Bearer " + testToken}
	alicesSession := g.createSessionWith(alice)
	adminsSession := g.createSessionWith(admin)
	annsSession := g.createSessionWith(as("ann"))

	for name, sid := range map[string]string{"oidc:alice": alicesSession, "admin": adminsSession, "anonymous": adminsSession} {
		proxied := map[string]string{"X-Forwarded-User": name}
		if st, code, body := g.request("GET", "/v1/sessions/"+sid, nil, proxied); st != 401 || code != "unauthorized" {
			t.Errorf("proxy naming %q on that principal's session: %d %s %s", name, st, code, body)
		}
		if st, code, body := g.request("GET", "/v1/me", nil, proxied); st != 401 {
			t.Errorf("proxy naming %q: /v1/me %d %s %s", name, st, code, body)
		}
	}
	if !strings.Contains(g.logs.String(), "ignored a trusted-user header") {
		t.Fatalf("the refused names were not logged:\n%s", g.logs.String())
	}
	if st, _, body := g.request("GET", "/v1/sessions/"+annsSession, nil, map[string]string{"X-Forwarded-User": "ann"}); st != 200 {
		t.Fatalf("the proxy's ann on the users file's ann's session: %d %s", st, body)
	}
}

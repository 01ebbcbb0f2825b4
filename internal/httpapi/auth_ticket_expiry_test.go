package httpapi

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/principal/oidcprovider"
)

// TestTicketOfAnExpiredOIDCTokenIsRefused: a WebSocket ticket minted with an OIDC token is refused once that
// token has expired, though the ticket itself is still within its own 30 s: a ticket carries no more time than
// the credentials that minted it. The token is a real one of a local issuer; the gateway's clock is moved.
func TestTicketOfAnExpiredOIDCTokenIsRefused(t *testing.T) {
	p := oidcprovider.Start()
	t.Cleanup(p.Close)
	v, err := principal.NewOIDC(context.Background(), principal.OIDCConfig{Issuer: p.Issuer, Audience: "gateway", Client: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAuth(AuthConfig{OIDC: v})
	var mu sync.Mutex
	now := time.Now()
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	mint := httptest.NewRequest("POST", "/v1/ws-tickets", nil)
	mint.Header.Set("Authorization", "Bearer "+p.Sign(p.Claims("sub-ann", "gateway", 10*time.Second, nil)))
	who, ok := a.identify(mint)
	if !ok || who.expires.IsZero() {
		t.Fatalf("the OIDC token: ok=%v expires=%v", ok, who.expires)
	}
	redeem := func(tk string) bool {
		_, ok := a.identify(httptest.NewRequest("GET", "/v1/sessions/s1/ws?ticket="+tk, nil))
		return ok
	}
	before, _, _ := a.Ticket(context.Background(), "s1", who)
	if !redeem(before) {
		t.Fatal("a ticket of a live token is refused")
	}

	after, exp, _ := a.Ticket(context.Background(), "s1", who)
	advance(who.expires.Sub(a.now())) // exactly the token's exp: expired
	if !a.now().Before(exp) {
		t.Fatalf("the ticket itself expired (%v ≥ %v): the test proves nothing", a.now(), exp)
	}
	if redeem(after) {
		t.Fatal("a ticket minted with an OIDC token that has since expired was accepted")
	}
}

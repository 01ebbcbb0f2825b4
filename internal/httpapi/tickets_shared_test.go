package httpapi

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/principal/oidcprovider"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
	"github.com/acp-gateway/gateway/internal/wsticket"
)

// jsTickets is a wsticket.Store on jsstore's bucket, as cmd/gateway wires it in mode c.
type jsTickets struct{ t *jsstore.Tickets }

func (j jsTickets) Mint(ctx context.Context, g wsticket.Grant) (string, time.Time, error) {
	return j.t.MintGrant(ctx, jsstore.TicketGrant{Session: g.Session, Principal: g.Principal, Via: g.Via, Until: g.Expires})
}

func (j jsTickets) Redeem(ctx context.Context, ticket, session string) (wsticket.Grant, error) {
	g, err := j.t.Redeem(ctx, ticket, session)
	if errors.Is(err, jsstore.ErrTicketInvalid) {
		return wsticket.Grant{}, wsticket.ErrInvalid
	}
	return wsticket.Grant{Session: g.Session, Principal: g.Principal, Via: g.Via, Expires: g.Until}, err
}

// sharedStore opens a ticket store of its own (its own connection) on srv: one per node.
func sharedStore(t *testing.T, srv *natstest.Server) wsticket.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := jsstore.Open(ctx, srv.Connect(), jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := st.Tickets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return jsTickets{tk}
}

// node is one gateway's Auth in a cluster sharing srv's tickets.
func node(t *testing.T, srv *natstest.Server, cfg AuthConfig) *Auth {
	cfg.Tickets = sharedStore(t, srv)
	return NewAuth(cfg)
}

func mintAs(t *testing.T, a *Auth, bearer, session string) string {
	t.Helper()
	r := httptest.NewRequest("POST", "/v1/ws-tickets", nil)
	r.Header.Set("Authorization", "Bearer "+bearer)
	who, ok := a.identify(r)
	if !ok {
		t.Fatal("the minting credential is refused")
	}
	tk, _, err := a.Ticket(context.Background(), session, who)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func redeemOn(a *Auth, ticket, session string) (identity, bool) {
	return a.identify(httptest.NewRequest("GET", "/v1/sessions/"+session+"/ws?ticket="+ticket, nil))
}

func writeUsers(t *testing.T, path string, names ...string) {
	t.Helper()
	body := `{"users": [`
	for i, n := range names {
		if i > 0 {
			body += ","
		}
		body += `{"name": "` + n + `", "role": "user", "tokenSha256": "` + principal.HashToken(n+"-token") + `"}`
	}
	if err := os.WriteFile(path, []byte(body+"]}"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSharedTicketAcrossNodes: a ticket minted on node A is redeemed on node B (another Auth, another
// connection to the same JetStream) with its principal, once; a bound ticket opens only its session's
// streams and is used up by a presentation for another one.
func TestSharedTicketAcrossNodes(t *testing.T) {
	srv := natstest.Embedded(t)
	users := filepath.Join(t.TempDir(), "users.json")
	writeUsers(t, users, "ann")
	open := func() *principal.Users {
		u, err := principal.OpenUsers(users)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	a := node(t, srv, AuthConfig{Token: "admin-token", Users: open()})
	b := node(t, srv, AuthConfig{Token: "admin-token", Users: open()})

	tk := mintAs(t, a, "ann-token", "")
	who, ok := redeemOn(b, tk, "s1")
	if !ok || who.p.Name != "ann" || who.via != viaUsers || who.live == nil {
		t.Fatalf("redeemed on B: %+v %v", who, ok)
	}
	if _, ok := redeemOn(a, tk, "s1"); ok {
		t.Fatal("a ticket was redeemed twice")
	}

	admin := mintAs(t, a, "admin-token", "")
	if who, ok := redeemOn(b, admin, "s1"); !ok || who.p != principal.TokenAdmin {
		t.Fatalf("the token's admin on B: %+v %v", who, ok)
	}

	bound := mintAs(t, a, "ann-token", "s1")
	if _, ok := redeemOn(b, bound, "s2"); ok {
		t.Fatal("a ticket bound to s1 opened s2")
	}
	if _, ok := redeemOn(b, bound, "s1"); ok {
		t.Fatal("a bound ticket presented for another session was not used up")
	}
	bound = mintAs(t, a, "ann-token", "s1")
	if _, ok := redeemOn(b, bound, "s1"); !ok {
		t.Fatal("a bound ticket is refused on its session")
	}

	// A node that does not know the credential's way (no single token here) refuses its tickets.
	c := node(t, srv, AuthConfig{Users: open()})
	if _, ok := redeemOn(c, mintAs(t, a, "admin-token", ""), "s1"); ok {
		t.Fatal("a node without a token accepted the token admin's ticket")
	}
}

// TestSharedTicketOfRevokedUser: the redeeming node refuses a ticket whose principal its own users file no
// longer holds, though the minting node (not reloaded) still does; and a principal changed there (another
// role) is refused too.
func TestSharedTicketOfRevokedUser(t *testing.T) {
	srv := natstest.Embedded(t)
	dir := t.TempDir()
	fileA, fileB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	writeUsers(t, fileA, "ann", "bob")
	writeUsers(t, fileB, "ann", "bob")
	ua, err := principal.OpenUsers(fileA)
	if err != nil {
		t.Fatal(err)
	}
	ub, err := principal.OpenUsers(fileB)
	if err != nil {
		t.Fatal(err)
	}
	a, b := node(t, srv, AuthConfig{Users: ua}), node(t, srv, AuthConfig{Users: ub})

	tk := mintAs(t, a, "ann-token", "")
	writeUsers(t, fileB, "bob")
	if _, err := ub.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, ok := redeemOn(b, tk, "s1"); ok {
		t.Fatal("B accepted a ticket of a user its users file revoked")
	}

	tk = mintAs(t, a, "bob-token", "")
	if err := os.WriteFile(fileB, []byte(`{"users": [{"name": "bob", "role": "admin", "tokenSha256": "`+principal.HashToken("bob-token")+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ub.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, ok := redeemOn(b, tk, "s1"); ok {
		t.Fatal("B accepted a ticket of a user whose role it changed")
	}
}

// TestSharedTicketOfExpiredOIDCToken: the token's expiry travels with the ticket, so the redeeming node
// refuses it once the OIDC token has expired though the ticket itself is still within its 30 s; before that
// the stream it opens carries the expiry.
func TestSharedTicketOfExpiredOIDCToken(t *testing.T) {
	srv := natstest.Embedded(t)
	p := oidcprovider.Start()
	t.Cleanup(p.Close)
	verifier := func() *principal.OIDC {
		v, err := principal.NewOIDC(context.Background(), principal.OIDCConfig{Issuer: p.Issuer, Audience: "gateway", Client: p.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := node(t, srv, AuthConfig{OIDC: verifier()}), node(t, srv, AuthConfig{OIDC: verifier()})
	var mu sync.Mutex
	now := time.Now()
	b.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }

	jwt := p.Sign(p.Claims("sub-ann", "gateway", 10*time.Second, nil))
	live := mintAs(t, a, jwt, "")
	who, ok := redeemOn(b, live, "s1")
	if !ok || who.via != viaOIDC || who.expires.IsZero() {
		t.Fatalf("a ticket of a live token on B: %+v %v", who, ok)
	}
	later := mintAs(t, a, jwt, "")
	mu.Lock()
	now = who.expires // exactly the token's exp: expired
	mu.Unlock()
	if _, ok := redeemOn(b, later, "s1"); ok {
		t.Fatal("B accepted a ticket minted with an OIDC token that has since expired")
	}
}

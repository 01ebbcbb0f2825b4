package principal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/principal/oidcprovider"
)

func startOIDC(t *testing.T) (*oidcprovider.Provider, *principal.OIDC) {
	t.Helper()
	p := oidcprovider.Start()
	t.Cleanup(p.Close)
	v, err := principal.NewOIDC(context.Background(), principal.OIDCConfig{Issuer: p.Issuer, Audience: "gateway", Client: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return p, v
}

func TestOIDCVerifiesAndNamesThePrincipal(t *testing.T) {
	p, v := startOIDC(t)
	ann := p.Sign(p.Claims("u-1", "gateway", time.Hour, map[string]any{"name": "Ann", "role": "user"}))
	got, exp, err := v.Verify(context.Background(), ann)
	if err != nil {
		t.Fatal(err)
	}
	if want := (principal.Principal{ID: "oidc:u-1", Name: "Ann", Role: principal.RoleUser}); got != want {
		t.Fatalf("principal = %+v, want %+v", got, want)
	}
	if time.Until(exp) < 50*time.Minute {
		t.Fatalf("expiry %v is not the token's", exp)
	}
	admin := p.Sign(p.Claims("u-2", "gateway", time.Hour, map[string]any{"role": []string{"dev", "admin"}}))
	got, _, err = v.Verify(context.Background(), admin)
	if err != nil || got.Role != principal.RoleAdmin || got.Name != "u-2" {
		t.Fatalf("array role claim: %+v, %v", got, err)
	}
}

// Every token the issuer did not sign for this audience, still valid and with a real signature, is refused.
func TestOIDCRefusesBadTokens(t *testing.T) {
	p, v := startOIDC(t)
	other := oidcprovider.Start() // another issuer with its own key
	defer other.Close()
	for name, tok := range map[string]string{
		"expired":                 p.Sign(p.Claims("u", "gateway", -time.Minute, nil)),
		"wrong audience":          p.Sign(p.Claims("u", "someone-else", time.Hour, nil)),
		"wrong issuer":            other.Sign(other.Claims("u", "gateway", time.Hour, nil)),
		"issuer claim of another": p.Sign(p.Claims("u", "gateway", time.Hour, map[string]any{"iss": other.Issuer})),
		"wrong key":               oidcprovider.SignWith(oidcprovider.NewKey(), "key-b", p.Claims("u", "gateway", time.Hour, nil)),
		"alg none":                oidcprovider.Unsigned(p.Claims("u", "gateway", time.Hour, nil)),
		"no subject":              p.Sign(p.Claims("", "gateway", time.Hour, nil)),
		"not a jwt":               "a.b.c",
	} {
		if got, _, err := v.Verify(context.Background(), tok); err == nil {
			t.Errorf("%s: accepted as %+v", name, got)
		}
	}
}

// A rotated key is fetched when a token names it; tokens of the retired key are refused after.
func TestOIDCPicksUpRotatedKeys(t *testing.T) {
	p, v := startOIDC(t)
	old := p.Sign(p.Claims("u", "gateway", time.Hour, nil))
	if _, _, err := v.Verify(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	fetches := p.KeyFetches()
	if _, _, err := v.Verify(context.Background(), old); err != nil || p.KeyFetches() != fetches {
		t.Fatalf("second verification: err %v, fetches %d → %d (keys not cached)", err, fetches, p.KeyFetches())
	}
	p.Rotate()
	fresh := p.Sign(p.Claims("u", "gateway", time.Hour, nil))
	if _, _, err := v.Verify(context.Background(), fresh); err != nil {
		t.Fatalf("token of the rotated key: %v", err)
	}
	// go-oidc answers the refetch's waiters before it replaces its cache, so for a moment after the fresh
	// token verified the cache may still hold the retired key: poll (bounded) until the new key set is the
	// cache, then the retired key must be refused. Before this, the test failed 1 run in a few dozen.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err := v.Verify(context.Background(), old)
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("token of the retired key still accepted 10 s after the key set rotated")
		}
		time.Sleep(time.Millisecond) // polling an observable condition, bounded above
	}
}

func TestOIDCDiscoveryFailureIsAnError(t *testing.T) {
	p := oidcprovider.Start()
	defer p.Close()
	_, err := principal.NewOIDC(context.Background(), principal.OIDCConfig{Issuer: p.Issuer + "/nowhere", Audience: "gateway", Client: p.Client()})
	if err == nil || !strings.Contains(err.Error(), "discovery") {
		t.Fatalf("err = %v", err)
	}
}

package principal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// OIDCConfig is where bearer JWTs come from and which claims name the principal.
type OIDCConfig struct {
	Issuer   string // the issuer URL; its discovery document names the JWKS
	Audience string // the `aud` a token must carry
	// Claim names; "" = "sub", "name", "role". The role claim may be a string or an array of strings: "admin"
	// (or an array holding it) is an admin, anything else a user.
	IDClaim, NameClaim, RoleClaim string
	// Client fetches discovery and keys; nil = a client with a 10 s timeout.
	Client *http.Client
}

// OIDC verifies bearer JWTs: signature against the issuer's JWKS (cached; a token signed with a key not in
// the cache refetches it, so rotated keys are picked up), issuer, audience and expiry.
type OIDC struct {
	// Static after construction.
	cfg      OIDCConfig
	verifier *oidc.IDTokenVerifier
}

// NewOIDC fetches the issuer's discovery document (bounded by ctx) and returns a verifier of its tokens.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidc: an issuer and an audience are both required")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.IDClaim == "" {
		cfg.IDClaim = "sub"
	}
	if cfg.NameClaim == "" {
		cfg.NameClaim = "name"
	}
	if cfg.RoleClaim == "" {
		cfg.RoleClaim = "role"
	}
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, cfg.Client), cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery of %s: %v", cfg.Issuer, err)
	}
	// The provider's key set lives as long as the provider: it fetches with the client, not with ctx.
	return &OIDC{cfg: cfg, verifier: provider.Verifier(&oidc.Config{ClientID: cfg.Audience})}, nil
}

// LooksLikeJWT reports whether a bearer token has a JWT's three dot-separated parts: only those are sent to
// the issuer's keys.
func LooksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// Verify checks raw and returns its principal: id "oidc:<id claim>", a namespace no users-file entry or
// proxy-named user can reach (namespace.go). expiry is the token's `exp`.
func (o *OIDC) Verify(ctx context.Context, raw string) (p Principal, expiry time.Time, err error) {
	tok, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return Principal{}, time.Time{}, err
	}
	var claims map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return Principal{}, time.Time{}, err
	}
	id := claimString(claims[o.cfg.IDClaim])
	if id == "" {
		return Principal{}, time.Time{}, fmt.Errorf("oidc: claim %q is missing", o.cfg.IDClaim)
	}
	name := claimString(claims[o.cfg.NameClaim])
	if name == "" {
		name = id
	}
	p = Principal{ID: OIDCPrefix + id, Name: name, Role: RoleUser}
	if claimHas(claims[o.cfg.RoleClaim], string(RoleAdmin)) {
		p.Role = RoleAdmin
	}
	return p, tok.Expiry, nil
}

func claimString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// claimHas reports whether a string claim equals want or an array claim holds it.
func claimHas(raw json.RawMessage, want string) bool {
	if claimString(raw) == want {
		return true
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		for _, v := range list {
			if v == want {
				return true
			}
		}
	}
	return false
}

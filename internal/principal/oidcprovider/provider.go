// Package oidcprovider is a local OpenID provider for tests: discovery and a JWKS served over httptest, and
// tokens signed with its keys (or others, or none) so verifiers can be tried against real tokens.
package oidcprovider

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Provider is one issuer. Its signing key can be rotated; the JWKS serves only the current key.
type Provider struct {
	// Static after construction.
	Issuer string
	srv    *httptest.Server
	client *http.Client

	mu   sync.Mutex
	key  *rsa.PrivateKey // Guarded by mu; the current signing key.
	kid  string          // Guarded by mu.
	gen  int             // Guarded by mu; rotations so far, for kids.
	hits int             // Guarded by mu; JWKS fetches.
}

// Start serves a provider on a loopback port; Close stops it.
func Start() *Provider {
	p := &Provider{}
	p.Rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": p.Issuer, "jwks_uri": p.Issuer + "/keys", "authorization_endpoint": p.Issuer + "/auth",
			"token_endpoint": p.Issuer + "/token", "id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits++
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: "RS256", Use: "sig"}}}
		p.mu.Unlock()
		writeJSON(w, set)
	})
	p.srv = httptest.NewServer(mux)
	p.Issuer = p.srv.URL
	p.client = &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	return p
}

// Client is the HTTP client verifiers should fetch with: Close closes its idle connections.
func (p *Provider) Client() *http.Client { return p.client }

// Close stops the provider and drops the client's connections.
func (p *Provider) Close() {
	p.client.CloseIdleConnections()
	p.srv.Close()
}

// Rotate replaces the signing key; the JWKS then serves only the new one.
func (p *Provider) Rotate() {
	k := NewKey()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	p.key, p.kid = k, "key-"+string(rune('a'+p.gen))
}

// KeyFetches counts JWKS fetches so far.
func (p *Provider) KeyFetches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits
}

// NewKey returns a fresh RSA key (one not in any provider's JWKS).
func NewKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// Claims are a token's standard claims for sub with audience aud, valid for ttl (negative: already
// expired), plus extra.
func (p *Provider) Claims(sub, aud string, ttl time.Duration, extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": p.Issuer, "sub": sub, "aud": aud, "iat": now.Add(-time.Minute).Unix(), "exp": now.Add(ttl).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// Sign signs claims with the current key.
func (p *Provider) Sign(claims map[string]any) string {
	p.mu.Lock()
	k, kid := p.key, p.kid
	p.mu.Unlock()
	return SignWith(k, kid, claims)
}

// SignWith signs claims with key under kid.
func SignWith(key *rsa.PrivateKey, kid string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, opts)
	if err != nil {
		panic(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return tok
}

// Unsigned is claims as an `alg: none` token (no signature), which no verifier may accept.
func Unsigned(claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	b, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(b) + "."
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
)

// identity is an authenticated caller: its principal, how it was identified and, for users of the users
// file, the context a reload ends when it revokes them; for OIDC tokens, when they expire.
type identity struct {
	p       principal.Principal
	via     string          // how: viaToken, viaUsers, viaOIDC, viaProxy, viaNone
	live    context.Context // nil = never revoked (the single token, OIDC, a proxy user not in the file)
	expires time.Time       // zero = never expires (all but OIDC)
}

// How a caller was identified (`GET /v1/me` `via`).
const (
	viaToken = "token" // the single --token
	viaUsers = "users" // a users-file token
	viaOIDC  = "oidc"  // an OIDC/JWT bearer token
	viaProxy = "proxy" // a trusted proxy's header
	viaNone  = "none"  // no authentication configured
)

// revoked reports whether id's credentials were revoked or expired by now.
func (id identity) revoked(now time.Time) bool {
	return id.live != nil && id.live.Err() != nil || !id.expires.IsZero() && !now.Before(id.expires)
}

type identityKey struct{}

// bind returns ctx carrying who (principal.From reads it) and, for a revocable user, the channel a
// revocation closes (principal.Revoked), on which sockets and event streams end.
func (id identity) bind(parent context.Context) context.Context {
	ctx := principal.WithContext(context.WithValue(parent, identityKey{}, id), id.p)
	switch {
	case id.live != nil:
		return principal.WithRevocation(ctx, id.live.Done())
	case !id.expires.IsZero():
		return principal.WithExpiry(ctx, id.expires)
	}
	return ctx
}

// identityFrom is the caller authenticate bound to ctx.
func identityFrom(ctx context.Context) identity {
	if id, ok := ctx.Value(identityKey{}).(identity); ok {
		return id
	}
	return identity{p: principal.From(ctx), via: viaNone}
}

// identify resolves r's caller: a trusted proxy's header; else the Authorization header anywhere; else, on
// the stream routes only (browsers cannot set headers there), a WebSocket ticket or a bearer subprotocol.
// A proxy header from an address that is not a trusted proxy is ignored (and logged): the request is judged
// by its credentials alone.
func (a *Auth) identify(r *http.Request) (identity, bool) {
	if a.proxy != nil {
		name, present, refused := a.proxy.Name(r)
		switch {
		case present && refused == nil:
			return a.byProxyName(name), true
		case present:
			a.logger.Warn("ignored a trusted-user header", "reason", refused.Error(),
				"header", a.proxy.Header, "remote", a.clientIP(r), "path", truncate(r.URL.Path, 200))
		}
	}
	if h := r.Header.Get("Authorization"); h != "" {
		tok, found := strings.CutPrefix(h, "Bearer ")
		if !found {
			return identity{}, false
		}
		return a.byToken(r.Context(), tok)
	}
	session, stream := streamRoute(r)
	if !stream {
		return identity{}, false
	}
	if t := r.URL.Query().Get("ticket"); t != "" {
		return a.redeem(r.Context(), t, session)
	}
	if isUpgrade(r) {
		for _, p := range strings.Split(r.Header.Get("Sec-WebSocket-Protocol"), ",") {
			if tok, found := strings.CutPrefix(strings.TrimSpace(p), bearerProtocolPrefix); found {
				return a.byToken(r.Context(), tok)
			}
		}
	}
	return identity{}, false
}

// byToken resolves a bearer token: the single token, a users-file token, or a JWT of the OIDC issuer.
func (a *Auth) byToken(ctx context.Context, tok string) (identity, bool) {
	if tok == "" {
		return identity{}, false
	}
	if a.tokenOK(tok) {
		return identity{p: principal.TokenAdmin, via: viaToken}, true
	}
	if a.users != nil {
		if p, live, ok := a.users.ByToken(tok); ok {
			return identity{p: p, via: viaUsers, live: live}, true
		}
	}
	if a.oidc != nil && principal.LooksLikeJWT(tok) {
		p, exp, err := a.oidc.Verify(ctx, tok)
		if err == nil {
			return identity{p: p, via: viaOIDC, expires: exp}, true
		}
		a.logger.Debug("bearer JWT refused", "err", err)
	}
	return identity{}, false
}

// byProxyName is the user a trusted proxy names: the users file's entry of that name (its role, revocable),
// else a user of that name.
func (a *Auth) byProxyName(name string) identity {
	if a.users != nil {
		if p, live, ok := a.users.ByName(name); ok {
			return identity{p: p, via: viaProxy, live: live}
		}
	}
	return identity{p: principal.Principal{ID: name, Name: name, Role: principal.RoleUser}, via: viaProxy}
}

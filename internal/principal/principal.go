// Package principal says who is calling: a principal {id, name, role} resolved from a credential (the
// single --token, a users file, an OIDC/JWT bearer token, a trusted proxy's header) and carried in the
// request's context to every face. Sessions belong to the principal that created them; docs/security.md
// describes the model.
package principal

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Role is what a principal may do: an admin sees and acts on every session, a user only on its own.
type Role string

// Roles.
const (
	RoleAdmin Role = "admin"
	RoleUser  Role = "user"
)

// ParseRole accepts "admin" and "user".
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case RoleAdmin, RoleUser:
		return Role(s), nil
	}
	return "", fmt.Errorf("role %q: want admin or user", s)
}

// Principal is who made a request. The zero value is nobody (a session made by the gateway's own code).
type Principal struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role Role   `json:"role"`
}

// IsAdmin reports whether p sees every session.
func (p Principal) IsAdmin() bool { return p.Role == RoleAdmin }

// IsZero reports whether p is nobody.
func (p Principal) IsZero() bool { return p.ID == "" }

// Ref is how frames and audit lines name a principal: id and display name, never the role or a credential.
type Ref struct {
	Principal string `json:"principal"`
	Name      string `json:"name"`
}

// Ref returns p as frames name it.
func (p Principal) Ref() Ref { return Ref{Principal: p.ID, Name: p.Name} }

// Anonymous is the caller when the gateway runs without authentication: whoever the host policy lets in is
// trusted with everything, as before principals existed.
var Anonymous = Principal{ID: "anonymous", Name: "anonymous", Role: RoleAdmin}

// TokenAdmin is the caller presenting the single --token: one admin.
var TokenAdmin = Principal{ID: "admin", Name: "admin", Role: RoleAdmin}

type ctxKey struct{}

// WithContext returns ctx carrying p.
func WithContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal ctx carries, Anonymous when none: a request that did not pass the
// authentication middleware only exists when the gateway runs without it (and in tests of one face).
func From(ctx context.Context) Principal {
	if p, ok := ctx.Value(ctxKey{}).(Principal); ok {
		return p
	}
	return Anonymous
}

type endKey struct{}

// credentialsEnd is when a request's credentials stop being good: a users-file reload revokes them (revoked),
// or they expire (an OIDC token's exp). The expiry's channel is made on first use: only streams ask for it,
// so a plain request costs no timer.
type credentialsEnd struct {
	revoked <-chan struct{} // nil = not revocable
	expires time.Time       // zero = no expiry

	once    sync.Once
	expired <-chan struct{} // set by once
}

// WithRevocation returns ctx carrying done, closed when the caller's credentials are revoked.
func WithRevocation(ctx context.Context, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, endKey{}, &credentialsEnd{revoked: done})
}

// WithExpiry returns ctx whose credentials expire at t (an OIDC token's exp).
func WithExpiry(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, endKey{}, &credentialsEnd{expires: t})
}

// CarryCredentials returns dst carrying the end of src's credentials (revocation, expiry): for a connection
// that outlives the request that opened it.
func CarryCredentials(dst, src context.Context) context.Context {
	if e, ok := src.Value(endKey{}).(*credentialsEnd); ok {
		return context.WithValue(dst, endKey{}, e)
	}
	return dst
}

// Revoked is closed when the credentials ctx's request came with are revoked (a users-file reload removed or
// changed the user) or expire (an OIDC token's exp); nil, which never fires in a select, when they cannot
// end. Sockets and event streams select on it and close (WebSockets with 1008, the reason from EndReason):
// cancelling the request's context instead would drop a WebSocket without its close code.
func Revoked(ctx context.Context) <-chan struct{} {
	e, _ := ctx.Value(endKey{}).(*credentialsEnd)
	switch {
	case e == nil:
		return nil
	case e.revoked != nil:
		return e.revoked
	case e.expires.IsZero():
		return nil
	}
	e.once.Do(func() {
		ch := make(chan struct{})
		time.AfterFunc(time.Until(e.expires), func() { close(ch) })
		e.expired = ch
	})
	return e.expired
}

// Reasons a stream ends when Revoked fires.
const (
	ReasonRevoked = "credentials revoked"
	ReasonExpired = "credentials expired"
)

// EndReason says why Revoked fired: ReasonExpired for credentials that expired, else ReasonRevoked.
func EndReason(ctx context.Context) string {
	if e, ok := ctx.Value(endKey{}).(*credentialsEnd); ok && e.revoked == nil && !e.expires.IsZero() {
		return ReasonExpired
	}
	return ReasonRevoked
}

// AuditAttrs are the attributes of an audit log line: `audit=true`, the action and who did it.
func AuditAttrs(p Principal, action string) []any {
	return []any{"audit", true, "action", action, "principal", p.ID, "principalName", p.Name}
}

// Audit logs one audited action by p: a structured line an operator can ship (filter on audit=true).
func Audit(logger *slog.Logger, p Principal, action string, attrs ...any) {
	logger.Info("audit "+action, append(AuditAttrs(p, action), attrs...)...)
}

// Package principal says who is calling: a principal {id, name, role} resolved from a credential (the
// single --token, a users file, an OIDC/JWT bearer token, a trusted proxy's header) and carried in the
// request's context to every face. Sessions belong to the principal that created them; docs/security.md
// describes the model.
package principal

import (
	"context"
	"fmt"
	"log/slog"
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

type revokedKey struct{}

// WithRevocation returns ctx carrying done, closed when the caller's credentials are revoked.
func WithRevocation(ctx context.Context, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, revokedKey{}, done)
}

// Revoked is closed when the credentials ctx's request came with are revoked (a users-file reload removed or
// changed the user); nil, which never fires in a select, when they cannot be. Sockets and event streams
// select on it and close (WebSockets with 1008): cancelling the request's context instead would drop a
// WebSocket without its close code.
func Revoked(ctx context.Context) <-chan struct{} {
	done, _ := ctx.Value(revokedKey{}).(<-chan struct{})
	return done
}

// AuditAttrs are the attributes of an audit log line: `audit=true`, the action and who did it.
func AuditAttrs(p Principal, action string) []any {
	return []any{"audit", true, "action", action, "principal", p.ID, "principalName", p.Name}
}

// Audit logs one audited action by p: a structured line an operator can ship (filter on audit=true).
func Audit(logger *slog.Logger, p Principal, action string, attrs ...any) {
	logger.Info("audit "+action, append(AuditAttrs(p, action), attrs...)...)
}

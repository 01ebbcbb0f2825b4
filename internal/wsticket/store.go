package wsticket

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
)

// Store keeps WebSocket tickets from their minting to their single redemption. The default keeps them
// in this process; a cluster of gateways shares one (cmd/gateway wires jsstore's) so a ticket minted on one
// node opens a stream on any other.
type Store interface {
	// Mint stores g under a new ticket and returns it with its expiry.
	Mint(ctx context.Context, g Grant) (ticket string, expires time.Time, err error)
	// Redeem uses up ticket for a stream of session ("" = not a session's stream): ErrInvalid when it
	// is unknown, used, expired or bound to another session (used up all the same). Revocation is the
	// caller's check.
	Redeem(ctx context.Context, ticket, session string) (Grant, error)
}

// ErrInvalid is a ticket that is unknown, used, expired or bound to another session.
var ErrInvalid = errors.New("invalid ticket")

// Grant is what a ticket carries: whose stream it opens, how they were identified, and, if bound,
// which session's.
type Grant struct {
	Session   string              // "" = any stream
	Principal principal.Principal // who minted it: the stream is theirs
	Via       string              // how they were identified (GET /v1/me `via`)
	Expires   time.Time           // when their credential expires (OIDC); zero = never
	// Live is the minter's revocation handle (a users-file entry's context), in this process only: a shared
	// store drops it and the redeeming node looks the principal up again (httpapi's Auth.current).
	Live context.Context
}

// memTickets is the default Store: a map in this process.
type memTickets struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	tickets map[string]memTicket // Guarded by mu.
}

type memTicket struct {
	grant   Grant
	expires time.Time
}

// NewMemory returns the default Store: tickets in this process's memory, each redeemable for ttl after its
// minting by the clock now.
func NewMemory(ttl time.Duration, now func() time.Time) Store {
	return &memTickets{ttl: ttl, now: now, tickets: map[string]memTicket{}}
}

func (m *memTickets) Mint(_ context.Context, g Grant) (string, time.Time, error) {
	var b [24]byte
	_, _ = rand.Read(b[:])
	t := base64.RawURLEncoding.EncodeToString(b[:])
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, e := range m.tickets { // expired tickets go as new ones come: the map stays small
		if now.After(e.expires) {
			delete(m.tickets, k)
		}
	}
	exp := now.Add(m.ttl)
	m.tickets[t] = memTicket{grant: g, expires: exp}
	return t, exp, nil
}

func (m *memTickets) Redeem(_ context.Context, t, session string) (Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tk, ok := m.tickets[t]
	delete(m.tickets, t)
	if !ok || m.now().After(tk.expires) || tk.grant.Session != "" && tk.grant.Session != session {
		return Grant{}, ErrInvalid
	}
	return tk.grant, nil
}

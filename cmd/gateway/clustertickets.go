package main

import (
	"context"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/wsticket"
)

// clusterTickets is a wsticket.Store on jsstore's tickets bucket (mode c): a ticket minted on one node
// is redeemed on any other, exactly once.
type clusterTickets struct {
	t *jsstore.Tickets // Static after construction.
}

var _ wsticket.Store = clusterTickets{}

func (c clusterTickets) Mint(ctx context.Context, g wsticket.Grant) (string, time.Time, error) {
	return c.t.MintGrant(ctx, jsstore.TicketGrant{Session: g.Session, Principal: g.Principal, Via: g.Via, Until: g.Expires})
}

func (c clusterTickets) Redeem(ctx context.Context, ticket, session string) (wsticket.Grant, error) {
	g, err := c.t.Redeem(ctx, ticket, session)
	if errors.Is(err, jsstore.ErrTicketInvalid) {
		return wsticket.Grant{}, wsticket.ErrInvalid
	}
	if err != nil {
		return wsticket.Grant{}, err
	}
	return wsticket.Grant{Session: g.Session, Principal: g.Principal, Via: g.Via, Expires: g.Until}, nil
}

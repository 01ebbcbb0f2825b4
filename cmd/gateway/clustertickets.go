package main

import (
	"context"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/httpapi"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// clusterTickets is httpapi's ticket store on jsstore's tickets bucket (mode c): a ticket minted on one node
// is redeemed on any other, exactly once.
type clusterTickets struct {
	t *jsstore.Tickets // Static after construction.
}

var _ httpapi.TicketStore = clusterTickets{}

func (c clusterTickets) Mint(ctx context.Context, g httpapi.TicketGrant) (string, time.Time, error) {
	return c.t.MintGrant(ctx, jsstore.TicketGrant{Session: g.Session, Principal: g.Principal, Via: g.Via, Until: g.Expires})
}

func (c clusterTickets) Redeem(ctx context.Context, ticket, session string) (httpapi.TicketGrant, error) {
	g, err := c.t.Redeem(ctx, ticket, session)
	if errors.Is(err, jsstore.ErrTicketInvalid) {
		return httpapi.TicketGrant{}, httpapi.ErrTicketInvalid
	}
	if err != nil {
		return httpapi.TicketGrant{}, err
	}
	return httpapi.TicketGrant{Session: g.Session, Principal: g.Principal, Via: g.Via, Expires: g.Until}, nil
}

package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/wsticket"
)

// Ticket issues a single-use ticket for who, valid for the store's TTL on the stream routes; bound to session
// when it is not "".
func (a *Auth) Ticket(ctx context.Context, session string, who identity) (string, time.Time, error) {
	return a.tickets.Mint(ctx, wsticket.Grant{Session: session, Principal: who.p, Via: who.via, Expires: who.expires, Live: who.live})
}

// redeem uses up ticket t for a stream of session ("" = not a session's stream) and returns who minted it.
// A ticket bound to another session is used up too: single use means one presentation. A ticket of a
// principal revoked since, or whose token expired since, is refused.
func (a *Auth) redeem(ctx context.Context, t, session string) (identity, bool) {
	g, err := a.tickets.Redeem(ctx, t, session)
	if err != nil {
		if !errors.Is(err, wsticket.ErrInvalid) {
			a.logger.Warn("a WebSocket ticket could not be redeemed", "err", err)
		}
		return identity{}, false
	}
	who := identity{p: g.Principal, via: g.Via, live: g.Live, expires: g.Expires}
	if a.sharedTickets {
		var ok bool
		if who, ok = a.current(g); !ok {
			return identity{}, false
		}
	}
	return who, !who.revoked(a.now())
}

// current is who a grant from a shared store names, as this node identifies them now. A ticket minted on
// another node carries the principal, how it was identified and when its credential expires, but not the
// minting node's revocation handle (a users-file entry's context lives in that process). So the redeeming
// node looks the principal up the way it identifies callers itself: a users-file principal must still be
// in its users file unchanged (its entry's context then ends the stream on a later revocation), the single
// token's admin needs a token configured here, a proxy user must be named the same by this node's rule, and
// an OIDC principal keeps its token's expiry. A user whose token alone changed keeps the tickets minted with
// the old one for their few seconds: the file names users, not tokens, across nodes.
func (a *Auth) current(g wsticket.Grant) (identity, bool) {
	who := identity{p: g.Principal, via: g.Via, expires: g.Expires}
	switch g.Via {
	case viaToken:
		return who, a.hasToken && g.Principal == principal.TokenAdmin
	case viaUsers:
		if a.users == nil {
			return who, false
		}
		p, live, ok := a.users.ByName(g.Principal.Name)
		who.live = live
		return who, ok && p == g.Principal
	case viaProxy:
		if a.proxy == nil {
			return who, false
		}
		now := a.byProxyName(g.Principal.Name)
		return now, principal.CheckLocalName(g.Principal.Name) == nil && now.p == g.Principal
	case viaOIDC:
		return who, a.oidc != nil && !g.Expires.IsZero()
	}
	return who, false
}

// ticketRequest is the optional body of `POST /v1/ws-tickets`: a sessionId binds the ticket to that
// session's streams.
type ticketRequest struct {
	SessionID string `json:"sessionId"`
}

func (s *Server) wsTicket(w http.ResponseWriter, r *http.Request) error {
	if s.Auth == nil {
		return problem(http.StatusNotFound, "auth_disabled", "the gateway runs without a token; WebSockets need no ticket")
	}
	var req ticketRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.SessionID != "" {
		if _, err := s.Registry.GetAs(principal.From(r.Context()), req.SessionID); err != nil {
			return err
		}
	}
	t, exp, err := s.Auth.Ticket(r.Context(), req.SessionID, identityFrom(r.Context()))
	if err != nil {
		s.Auth.logger.Warn("a WebSocket ticket could not be stored", "err", err)
		p := problem(http.StatusServiceUnavailable, "store_unavailable", "the ticket store did not answer; retry")
		p.RetryAfter = 5
		return p
	}
	res := map[string]any{"ticket": t, "expiresAt": exp.UTC().Format(time.RFC3339), "ttlSeconds": int(exp.Sub(s.Auth.now()).Round(time.Second).Seconds())}
	if req.SessionID != "" {
		res["sessionId"] = req.SessionID
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

package httpapi

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
)

// ticket is an issued WebSocket ticket.
type ticket struct {
	expires time.Time
	session string   // "" = any stream; else only this session's streams
	who     identity // the principal that minted it: the stream is theirs
}

// Ticket issues a single-use ticket for who, valid for ticketTTL on the stream routes; bound to session
// when it is not "".
func (a *Auth) Ticket(session string, who identity) (string, time.Time) {
	var b [24]byte
	_, _ = rand.Read(b[:])
	t := base64.RawURLEncoding.EncodeToString(b[:])
	exp := a.now().Add(a.ticketTTL)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for k, e := range a.tickets { // expired tickets go as new ones come: the map stays small
		if now.After(e.expires) {
			delete(a.tickets, k)
		}
	}
	a.tickets[t] = ticket{expires: exp, session: session, who: who}
	return t, exp
}

// redeem uses up ticket t for a stream of session ("" = not a session's stream) and returns who minted it.
// A ticket bound to another session is used up too: single use means one presentation. A ticket of a
// principal revoked since, or whose token expired since, is refused.
func (a *Auth) redeem(t, session string) (identity, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	tk, ok := a.tickets[t]
	delete(a.tickets, t)
	ok = ok && !a.now().After(tk.expires) && (tk.session == "" || tk.session == session) && !tk.who.revoked(a.now())
	return tk.who, ok
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
	t, exp := s.Auth.Ticket(req.SessionID, identityFrom(r.Context()))
	res := map[string]any{"ticket": t, "expiresAt": exp.UTC().Format(time.RFC3339), "ttlSeconds": int(s.Auth.ticketTTL.Seconds())}
	if req.SessionID != "" {
		res["sessionId"] = req.SessionID
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

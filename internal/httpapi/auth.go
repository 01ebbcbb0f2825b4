package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Auth checks bearer tokens and issues single-use WebSocket tickets. A nil *Auth (no token configured) lets
// everything through: cmd/gateway refuses that on non-loopback addresses unless told otherwise.
type Auth struct {
	// Static after construction.
	digest    [32]byte // sha256 of the token: compared in constant time, never logged
	ticketTTL time.Duration
	rps       rate.Limit
	burst     int
	now       func() time.Time

	mu       sync.Mutex
	tickets  map[string]time.Time     // Guarded by mu; ticket → expiry.
	limiters map[string]*rate.Limiter // Guarded by mu; per credential.
}

// NewAuth returns an Auth for token. rps is the per-token request rate (0 = unlimited).
func NewAuth(token string, rps float64, burst int) *Auth {
	a := &Auth{digest: sha256.Sum256([]byte(token)), ticketTTL: 30 * time.Second, now: time.Now,
		tickets: map[string]time.Time{}, limiters: map[string]*rate.Limiter{}, rps: rate.Limit(rps), burst: burst}
	if rps <= 0 {
		a.rps = rate.Inf
	}
	if a.burst <= 0 {
		a.burst = max(1, int(2*rps))
	}
	return a
}

func (a *Auth) tokenOK(token string) bool {
	d := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(d[:], a.digest[:]) == 1
}

// bearerProtocolPrefix marks a token carried in Sec-WebSocket-Protocol (browsers cannot set headers on
// `new WebSocket()`): the client offers ["acp-gateway.v1", "bearer.<token>"] and the server selects the
// application protocol, never echoing the token.
const bearerProtocolPrefix = "bearer."

// credential extracts the presented credential: the Authorization header, a WebSocket ticket, or a bearer
// subprotocol. It returns ok=false when none is valid.
func (a *Auth) credential(r *http.Request) (key string, ok bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, found := strings.CutPrefix(h, "Bearer ")
		return "token", found && a.tokenOK(tok)
	}
	// Browsers cannot set headers on WebSocket and EventSource connections: those may carry a ticket.
	if isUpgrade(r) || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		if t := r.URL.Query().Get("ticket"); t != "" {
			return "token", a.redeem(t)
		}
		for _, p := range strings.Split(r.Header.Get("Sec-WebSocket-Protocol"), ",") {
			if tok, found := strings.CutPrefix(strings.TrimSpace(p), bearerProtocolPrefix); found {
				return "token", a.tokenOK(tok)
			}
		}
	}
	return "", false
}

// Ticket issues a single-use ticket valid for ticketTTL.
func (a *Auth) Ticket() (string, time.Time) {
	var b [24]byte
	_, _ = rand.Read(b[:])
	t := base64.RawURLEncoding.EncodeToString(b[:])
	exp := a.now().Add(a.ticketTTL)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for k, e := range a.tickets { // expired tickets go as new ones come: the map stays small
		if now.After(e) {
			delete(a.tickets, k)
		}
	}
	a.tickets[t] = exp
	return t, exp
}

func (a *Auth) redeem(t string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.tickets[t]
	delete(a.tickets, t)
	return ok && !a.now().After(exp)
}

func (a *Auth) allow(key string) (bool, time.Duration) {
	if a.rps == rate.Inf {
		return true, 0
	}
	a.mu.Lock()
	l, ok := a.limiters[key]
	if !ok {
		l = rate.NewLimiter(a.rps, a.burst)
		a.limiters[key] = l
	}
	a.mu.Unlock()
	res := l.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return false, d
	}
	return true, 0
}

// publicPath reports routes that need no credential: liveness, readiness, the contract and the UI's files.
func publicPath(r *http.Request) bool {
	p := r.URL.Path
	return p == "/healthz" || p == "/readyz" || p == "/openapi.yaml" || !strings.HasPrefix(p, "/v1/") && p != "/metrics" && !strings.HasPrefix(p, "/acp")
}

// authenticate enforces the token on every non-public route with a uniform 401, then the per-token rate.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := s.Auth
		if publicPath(r) || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if a == nil { // without a token whoever the host policy lets in is trusted
			connAuthenticated(r)
			next.ServeHTTP(w, r)
			return
		}
		key, ok := a.credential(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="acp-gateway"`)
			writeError(w, problem(http.StatusUnauthorized, "unauthorized", "a valid bearer token (or WebSocket ticket) is required"))
			return
		}
		if ok, wait := a.allow(key); !ok {
			p := problem(http.StatusTooManyRequests, "rate_limited", "too many requests for this token")
			p.RetryAfter = max(1, int(wait.Seconds()+0.999))
			writeError(w, p)
			return
		}
		connAuthenticated(r)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) wsTicket(w http.ResponseWriter, r *http.Request) error {
	if s.Auth == nil {
		return problem(http.StatusNotFound, "auth_disabled", "the gateway runs without a token; WebSockets need no ticket")
	}
	t, exp := s.Auth.Ticket()
	writeJSON(w, http.StatusCreated, map[string]any{"ticket": t, "expiresAt": exp.UTC().Format(time.RFC3339), "ttlSeconds": int(s.Auth.ticketTTL.Seconds())})
	return nil
}

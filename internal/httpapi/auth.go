package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/connlimit"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/wsticket"
	"golang.org/x/time/rate"
)

// Auth resolves each request to a principal (auth_identify.go) and issues single-use WebSocket tickets that
// carry it. A nil *Auth (no way to identify callers configured) lets everything through as
// principal.Anonymous: cmd/gateway refuses that on non-loopback addresses unless told otherwise.
type Auth struct {
	// Static after construction.
	digest   [32]byte // sha256 of the single token: compared in constant time, never logged
	hasToken bool
	users    *principal.Users       // nil = no users file
	oidc     *principal.OIDC        // nil = no OIDC
	proxy    *principal.ProxyHeader // nil = no trusted proxy header
	proxies  []netip.Prefix         // peers whose X-Forwarded-For names the client; nil = none
	logger   *slog.Logger
	tickets  wsticket.Store
	// sharedTickets: tickets come from other nodes, whose revocation handles are not ours (Auth.current).
	sharedTickets bool
	rps           rate.Limit
	burst         int
	now           func() time.Time

	mu       sync.Mutex
	limiters map[string]*rate.Limiter // Guarded by mu; per principal id.
	failures map[string]*rate.Limiter // Guarded by mu; failed attempts per remote IP.
}

// ticketTTL is how long a ticket in memory may wait for its redemption.
const ticketTTL = 30 * time.Second

// Failed attempts allowed per remote IP: a burst, then one a second. Past that the address gets 429 before
// its credential is even looked at, so guessing is slow and costs the gateway little.
const (
	failureBurst = 20
	failureRate  = rate.Limit(1)
	// failureIPs bounds the failures map: past it, addresses that have recovered their burst are forgotten.
	failureIPs = 10000
)

// AuthConfig says how callers are identified; any combination of the ways may be set.
type AuthConfig struct {
	Token  string                 // the single bearer token: principal.TokenAdmin
	Users  *principal.Users       // the users file
	OIDC   *principal.OIDC        // OIDC/JWT bearer tokens
	Proxy  *principal.ProxyHeader // a trusted proxy's header naming the user
	RPS    float64                // requests per second per principal; 0 = unlimited
	Burst  int                    // 0 = twice RPS
	Logger *slog.Logger           // nil = slog.Default()
	// Tickets is where WebSocket tickets wait for their redemption: nil = this process's memory (30 s). A
	// store shared by the nodes of a cluster lets a ticket minted on one be redeemed on another.
	Tickets wsticket.Store
	// TrustedProxies are the peers whose X-Forwarded-For names the client (failed attempts are counted by
	// its address); nil = the peer is the client.
	TrustedProxies []netip.Prefix
}

// NewAuth returns an Auth for cfg.
func NewAuth(cfg AuthConfig) *Auth {
	a := &Auth{hasToken: cfg.Token != "", digest: sha256.Sum256([]byte(cfg.Token)), users: cfg.Users, oidc: cfg.OIDC, proxy: cfg.Proxy,
		proxies: cfg.TrustedProxies, logger: cfg.Logger, now: time.Now, tickets: cfg.Tickets, sharedTickets: cfg.Tickets != nil,
		failures: map[string]*rate.Limiter{}, limiters: map[string]*rate.Limiter{}, rps: rate.Limit(cfg.RPS), burst: cfg.Burst}
	if a.tickets == nil {
		a.tickets = wsticket.NewMemory(ticketTTL, func() time.Time { return a.now() })
	}
	if cfg.RPS <= 0 {
		a.rps = rate.Inf
	}
	if a.burst <= 0 {
		a.burst = max(1, int(2*cfg.RPS))
	}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	return a
}

func (a *Auth) tokenOK(token string) bool {
	d := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(d[:], a.digest[:])&boolInt(a.hasToken) == 1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bearerProtocolPrefix marks a token carried in Sec-WebSocket-Protocol (browsers cannot set headers on
// `new WebSocket()`): the client offers ["acp-gateway.v1", "bearer.<token>"] and the server selects the
// application protocol, never echoing the token.
const bearerProtocolPrefix = "bearer."

// streamRoute reports whether r is a GET of a stream route a browser opens without headers
// (`/v1/sessions/{id}/ws`, `/v1/sessions/{id}/events`, `/acp`, `/acp/{agent}`, a terminal login's socket),
// and the session it names. It reads the path itself: authentication runs before routing.
func streamRoute(r *http.Request) (session string, ok bool) {
	if r.Method != http.MethodGet {
		return "", false
	}
	p := r.URL.Path
	if p == "/acp" {
		return "", true
	}
	if agent, found := strings.CutPrefix(p, "/acp/"); found {
		return "", agent != "" && !strings.Contains(agent, "/")
	}
	if rest, found := strings.CutPrefix(p, "/v1/agents/"); found {
		return "", isLoginSocket(rest) // a terminal login's socket (termlogin.go)
	}
	rest, found := strings.CutPrefix(p, "/v1/sessions/")
	if !found {
		return "", false
	}
	id, face, found := strings.Cut(rest, "/")
	if !found || id == "" || face != "ws" && face != "events" {
		return "", false
	}
	return id, true
}

// failureWait reports how long ip must wait before its credential is checked again (0 = now).
func (a *Auth) failureWait(ip string) time.Duration {
	a.mu.Lock()
	l := a.failures[ip]
	a.mu.Unlock()
	if l == nil {
		return 0
	}
	if tokens := l.Tokens(); tokens < 1 { // looking must not use up an attempt: only a failure does
		return time.Duration((1 - tokens) / float64(failureRate) * float64(time.Second))
	}
	return 0
}

// failed counts a failed attempt from ip.
func (a *Auth) failed(ip string) {
	a.mu.Lock()
	l := a.failures[ip]
	if l == nil {
		if len(a.failures) >= failureIPs {
			for k, old := range a.failures {
				if old.Tokens() >= failureBurst {
					delete(a.failures, k)
				}
			}
			for k := range a.failures { // still full: forget one address rather than grow
				if len(a.failures) < failureIPs {
					break
				}
				delete(a.failures, k)
			}
		}
		l = rate.NewLimiter(failureRate, failureBurst)
		a.failures[ip] = l
	}
	a.mu.Unlock()
	l.Allow()
}

// clientIP is the address failed attempts are counted by: the client's, also behind a trusted proxy, so one
// client guessing tokens does not lock out everyone else who comes through the same proxy.
func (a *Auth) clientIP(r *http.Request) string {
	return principal.ClientAddr(r, a.proxies)
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

// authenticate resolves every non-public request to a principal with a uniform 401 when it cannot, then
// applies the per-principal rate. The principal rides in the request's context (principal.From), with the
// channel a users-file reload closes when it revokes them (principal.Revoked): their sockets and streams end.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := s.Auth
		if publicPath(r) || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if a == nil { // without authentication whoever the host policy lets in is trusted
			connlimit.Authenticated(r, principal.Anonymous)
			next.ServeHTTP(w, r.WithContext(principal.WithContext(r.Context(), principal.Anonymous)))
			return
		}
		ip := a.clientIP(r)
		if wait := a.failureWait(ip); wait > 0 {
			p := problem(http.StatusTooManyRequests, "rate_limited", "too many failed attempts from this address")
			p.RetryAfter = max(1, int(wait.Seconds()+0.999))
			writeError(w, p)
			return
		}
		who, ok := a.identify(r)
		if !ok {
			a.failed(ip)
			w.Header().Set("WWW-Authenticate", `Bearer realm="acp-gateway"`)
			writeError(w, problem(http.StatusUnauthorized, "unauthorized", "a valid bearer token (or WebSocket ticket) is required"))
			return
		}
		if ok, wait := a.allow(who.p.ID); !ok {
			p := problem(http.StatusTooManyRequests, "rate_limited", "too many requests for this principal")
			p.RetryAfter = max(1, int(wait.Seconds()+0.999))
			writeError(w, p)
			return
		}
		if !connlimit.Authenticated(r, who.p) {
			refuseUserConn(w)
			return
		}
		next.ServeHTTP(w, r.WithContext(who.bind(r.Context())))
	})
}

// refuseUserConn answers a request on a connection past its user's cap and closes the connection after it.
func refuseUserConn(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	p := problem(http.StatusTooManyRequests, "too_many_user_connections", "you hold as many open connections as one user may (--max-conns-per-user), none of them idle: close one (a WebSocket, an event stream) first")
	p.RetryAfter = 5
	writeError(w, p)
}

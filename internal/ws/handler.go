package ws

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/acp-gateway/gateway/internal/conngroup"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/coder/websocket"
)

// Options configures the WebSocket face. Zero values mean the documented defaults.
type Options struct {
	QueueFrames  int           // frames a client may lag behind live before eviction; 0 = 4096
	QueueBytes   int64         // bytes a client may lag behind live before eviction; 0 = 16 MiB
	ReadLimit    int64         // largest frame accepted from a client; 0 = 16 MiB
	PingInterval time.Duration // 0 = 25 s
	WriteTimeout time.Duration // one frame's write; 0 = 10 s
	Logger       *slog.Logger
	Metrics      *metrics.Metrics
	Inbound      *inbound.Budget // shared bound of client frame bytes held by readers; nil = unbounded
}

func (o Options) withDefaults() Options {
	if o.QueueFrames <= 0 {
		o.QueueFrames = 4096
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 16 << 20
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 16 << 20
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 25 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Handler serves `/v1/sessions/{id}/ws`.
type Handler struct {
	// Static after construction.
	reg      *sessions.Registry
	opts     Options
	conns    *conngroup.Group // open connections; closing it is the shutdown signal
	shutdown <-chan struct{}  // conns.Closing()
	face     *metrics.Face    // this face's counters
}

// NewHandler returns the WebSocket face of reg.
func NewHandler(reg *sessions.Registry, opts Options) *Handler {
	g := conngroup.New()
	o := opts.withDefaults()
	return &Handler{reg: reg, opts: o, conns: g, shutdown: g.Closing(), face: o.Metrics.Face("ws")}
}

// Drain tells every connection the gateway is shutting down (they close with 1001) without waiting. A socket
// whose session the registry's shutdown closed already ended with 1001 after the session's last frames
// (sessionerr.ErrShutdown); Drain ends the others.
func (h *Handler) Drain() { h.conns.Close() }

// Shutdown closes every connection with 1001 and waits for their goroutines (or ctx).
func (h *Handler) Shutdown(ctx context.Context) error {
	return h.conns.Wait(ctx)
}

// ServeSession upgrades and streams session id. Problems found before the upgrade that a browser could not
// read from an HTTP status (unknown session) are reported as close codes after it.
func (h *Handler) ServeSession(w http.ResponseWriter, r *http.Request, id string) {
	select {
	case <-h.shutdown:
		frameout.WriteProblem(w, http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
		return
	default:
	}
	after, hasAfter, err := parseAfter(r)
	if err != nil {
		frameout.WriteProblem(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	// A session the caller may not see is one that does not exist: 4004 like any other.
	s, sessErr := h.reg.GetAs(principal.From(r.Context()), id)
	switch {
	case errors.Is(sessErr, sessionerr.ErrStoreUnavailable):
		// The session exists but the store could not load it: 4004 would tell the client to forget it.
		frameout.WriteRetryProblem(w, http.StatusServiceUnavailable, "store_unavailable", "the session store did not answer; retry", 5)
		return
	case errors.Is(sessErr, sessionerr.ErrShuttingDown):
		frameout.WriteProblem(w, http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
		return
	}
	var sub *sessions.Subscriber
	if sessErr == nil {
		var ok bool
		if sub, ok = s.AttachAs(principal.From(r.Context())); !ok {
			frameout.WriteRetryProblem(w, http.StatusServiceUnavailable, "too_many_clients", "the session is at its client limit", 5)
			return
		}
		defer sub.Detach()
	}
	c, held, err := frameout.Accept(w, r, &websocket.AcceptOptions{
		// The router's origin policy (httpapi) already refused foreign origins, upgrades included; a second
		// matcher with other rules here would only disagree with it.
		InsecureSkipVerify: true,
		// A browser that sends its token as a "bearer.<token>" subprotocol offers this one beside it; the
		// server selects it so the token is never echoed.
		Subprotocols: []string{Subprotocol},
	})
	if err != nil {
		return // Accept wrote the HTTP error (bad handshake, forbidden origin).
	}
	c.SetReadLimit(h.opts.ReadLimit)
	if sessErr != nil {
		c.Close(CodeNotFound, reasonNotFound)
		return
	}
	if !h.conns.Join() {
		c.Close(CodeGoingAway, reasonShutdown)
		return
	}
	defer h.conns.Leave()
	h.face.Connected(1)
	defer h.face.Connected(-1)
	cl := newClient(r.Context(), h, c, held, sub, s.StartAt(after, hasAfter, r.URL.Query().Get("epoch")))
	cl.run(r.Context())
}

func parseAfter(r *http.Request) (uint64, bool, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, errors.New("after must be a non-negative integer seq")
	}
	return n, true, nil
}

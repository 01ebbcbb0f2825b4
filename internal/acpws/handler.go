package acpws

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/acpws/acphttp"
	"github.com/acp-gateway/gateway/internal/conngroup"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// Options configures the `/acp` face. Zero values mean the documented defaults.
type Options struct {
	QueueFrames int   // frames a socket may lag behind a live log before it is closed (4001); 0 = 4096
	QueueBytes  int64 // bytes a socket may lag behind a live log before it is closed (4001); 0 = 16 MiB
	ReadLimit   int64 // largest frame accepted from a client (1009 past it); 0 = 16 MiB
	OutQueue    int   // operations (responses, attach steps) queued for the writer; 0 = 256
	MaxInflight int   // requests handled at once per socket, running prompts included; 0 = 64
	MaxConns    int   // sockets open at once; past it the upgrade is refused with 503; 0 = 256
	// MaxConnsPerUser bounds the connections one principal of role user holds (admins are bound only by
	// MaxConns); past it they are refused with 429. 0 = no per-user bound.
	MaxConnsPerUser int
	ListPageSize    int           // sessions per session/list page; 0 = 100
	PingInterval    time.Duration // 0 = 25 s
	WriteTimeout    time.Duration // one frame's write; 0 = 10 s
	FSTimeout       time.Duration // how long an agent's fs/* request waits for the client serving it; 0 = 30 s
	// IdleTimeout ends a Streamable HTTP connection that has had no open stream and no request for this
	// long, as a closed WebSocket ends (its sessions go on); 0 = 60 s.
	IdleTimeout time.Duration
	// Subprotocols the server may select when a client offers them (e.g. the one a browser offers beside
	// its "bearer.<token>" credential). None offered by the client: none selected, as raw-ACP clients expect.
	Subprotocols []string
	// LoadReplay is what session/load replays: ReplayLog ("" = default) or ReplayTranscript.
	LoadReplay string
	Logger     *slog.Logger     // nil = slog.Default()
	Metrics    *metrics.Metrics // nil = no metrics
	// Inbound is the bound of client frame bytes held by readers, shared by every socket (and with the
	// session WebSocket); nil = unbounded.
	Inbound *inbound.Budget
	Version string // the gateway's version in its own agentInfo; "" = "dev"
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
	if o.OutQueue <= 0 {
		o.OutQueue = 256
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = 64
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 256
	}
	if o.ListPageSize <= 0 {
		o.ListPageSize = 100
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 25 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.FSTimeout <= 0 {
		o.FSTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}

// What session/load replays.
const (
	// ReplayLog replays the `session/update` frames of the session's event log, byte for byte and in wire
	// order (thoughts, plans, usage and tool_call_updates included), as the socket's live clients saw them.
	// When the log was trimmed and no longer starts at seq 1, the load falls back to ReplayTranscript.
	ReplayLog = "log"
	// ReplayTranscript replays the compact transcript of the session's snapshot (Session.Replay): user and
	// agent messages, each tool call once in its final state, then the last plan, commands and title.
	ReplayTranscript = "transcript"
)

// Handler serves `/acp` and `/acp/{agent}`.
type Handler struct {
	// Static after construction.
	reg        *sessions.Registry
	opts       Options
	conns      *conngroup.Group // open connections (either transport); closing it is the shutdown signal
	shutdown   <-chan struct{}  // conns.Closing()
	slots      *connSlots       // open connections (either transport): the connection caps
	streamable *acphttp.Server  // the Streamable HTTP transport and its connections
	face       *metrics.Face    // this face's counters
}

// NewHandler returns the raw-ACP face of reg.
func NewHandler(reg *sessions.Registry, opts Options) *Handler {
	g := conngroup.New()
	o := opts.withDefaults()
	h := &Handler{
		reg: reg, opts: o, conns: g, shutdown: g.Closing(),
		slots: newConnSlots(o.MaxConns, o.MaxConnsPerUser), face: o.Metrics.Face("acp"),
	}
	h.streamable = acphttp.NewServer(acphttp.Config{
		Registry: reg, Conns: g, Face: h.face, Acquire: h.slots.acquire,
		NewConn: func(ctx context.Context, t *acphttp.Transport, agent string) acphttp.Conn {
			return newConn(ctx, h, t, agent)
		},
		Inbound: o.Inbound, ReadLimit: o.ReadLimit, QueueBytes: o.QueueBytes, IdleTimeout: o.IdleTimeout,
		WriteTimeout: o.WriteTimeout, PingInterval: o.PingInterval, Logger: o.Logger,
	})
	return h
}

// ServeHTTP serves `/acp`: the default agent.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.ServeAgent(w, r, "") }

// ServeAgent serves a connection whose new sessions use agent ("" = the registry's default): a WebSocket
// upgrade is the WebSocket transport, a POST, GET (Accept: text/event-stream) or DELETE is Streamable HTTP.
// An unknown agent is a 404; every refusal is problem+json, as on the REST routes (a POST body that is not
// one JSON-RPC message is answered with a JSON-RPC error, as the official transport does).
func (h *Handler) ServeAgent(w http.ResponseWriter, r *http.Request, agent string) {
	select {
	case <-h.shutdown:
		frameout.WriteProblem(w, http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
		return
	default:
	}
	if agent == "" {
		agent = h.reg.DefaultAgent()
	}
	if !h.hasAgent(agent) {
		frameout.WriteProblem(w, http.StatusNotFound, "unknown_agent", "no agent of this name is configured")
		return
	}
	switch {
	case isWebSocketUpgrade(r):
		h.serveWebSocket(w, r, agent)
	case r.Method == http.MethodGet && !acphttp.AcceptsEventStream(r) && r.Header.Get(acphttp.HeaderConnectionID) == "":
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		frameout.WriteProblem(w, http.StatusUpgradeRequired, "upgrade_required", "this route is a WebSocket or Streamable HTTP: send a WebSocket upgrade, or POST initialize")
	default:
		h.streamable.Serve(w, r, agent)
	}
}

// serveWebSocket upgrades to a raw ACP socket. The 101 carries an Acp-Connection-Id, as the official
// server's does (the WebSocket transport itself needs none).
func (h *Handler) serveWebSocket(w http.ResponseWriter, r *http.Request, agent string) {
	release := h.slots.acquire(w, principal.From(r.Context()))
	if release == nil {
		return
	}
	defer release()
	w.Header().Set(acphttp.HeaderConnectionID, uuid.NewString())
	c, held, err := frameout.Accept(w, r, &websocket.AcceptOptions{
		// The router's origin policy (httpapi) already refused foreign origins, upgrades included; a second
		// matcher with other rules here would only disagree with it.
		InsecureSkipVerify: true,
		Subprotocols:       h.opts.Subprotocols,
	})
	if err != nil {
		return // Accept wrote the HTTP error (bad handshake, forbidden origin).
	}
	c.SetReadLimit(h.opts.ReadLimit)
	if !h.conns.Join() {
		c.Close(websocket.StatusGoingAway, reasonShutdown)
		return
	}
	defer h.conns.Leave()
	h.face.Connected(1)
	defer h.face.Connected(-1)
	t := &wsTransport{ws: c, held: held}
	t.c = newConn(r.Context(), h, t, agent)
	t.c.Run()
}

// Shutdown closes every socket with 1001 and waits for their goroutines (or ctx). Sessions are left to the
// registry's own shutdown.
func (h *Handler) Shutdown(ctx context.Context) error {
	return h.conns.Wait(ctx)
}

func (h *Handler) hasAgent(name string) bool {
	for _, a := range h.reg.Agents() {
		if a.Name == name {
			return true
		}
	}
	return false
}

// isWebSocketUpgrade reports whether r asks to upgrade to a WebSocket.
func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

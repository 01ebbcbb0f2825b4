package httpapi

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-gateway/gateway/internal/acpws"
	"github.com/acp-gateway/gateway/internal/connlimit"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/originpolicy"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/telemetry"
	"github.com/acp-gateway/gateway/internal/termlogin"
	"github.com/acp-gateway/gateway/internal/ws"
	"github.com/go-chi/chi/v5"
)

// Server is the HTTP face. Fields are set before Handler is called and not changed after.
type Server struct {
	Registry     *sessions.Registry
	WS           *ws.Handler
	ACP          *acpws.Handler // raw ACP over WebSocket and Streamable HTTP at /acp and /acp/{agent}
	Logger       *slog.Logger
	OpenAPI      []byte // served at /openapi.yaml
	Web          fs.FS  // the UI, served at /; nil = no UI
	MaxBodyBytes int64  // 0 = 4 MiB
	Version      string
	// Commit and BuildDate identify the build on /healthz beside Version; "" leaves them out.
	Commit, BuildDate string
	Auth              *Auth             // nil = no authentication
	Metrics           *metrics.Metrics  // nil = no metrics
	Tracer            *telemetry.Tracer // nil = no traces: no span per request
	// Logins runs agents' terminal logins (termlogin.go); nil = none (their routes answer 404).
	Logins *termlogin.Manager
	// SSEHeartbeat is the interval of the comment that keeps idle event streams alive through proxies;
	// 0 = 15 s.
	SSEHeartbeat time.Duration
	// StreamWriteTimeout bounds one write to an event stream: a client that stops reading is dropped after
	// it (the frame writer's watchdog, as on the WebSocket faces); 0 = 10 s.
	StreamWriteTimeout time.Duration
	// AllowedOrigins are host patterns ("app.example.com", "localhost:*") that browsers may call from,
	// besides the gateway's own origin.
	AllowedOrigins []string
	// AllowedHosts are Host header patterns served besides loopback names and ListenHost. Without Auth only
	// those are served (DNS rebinding); with Auth any Host is, unless AllowedHosts is set.
	AllowedHosts []string
	// StreamQueueFrames and StreamQueueBytes bound how far an event stream may lag behind live frames before
	// it is ended (as --ws-queue-* do for WebSockets); 0 = 4096 frames, 16 MiB.
	StreamQueueFrames int
	StreamQueueBytes  int64
	// BodyTimeout bounds how long a request body may take to arrive (408 body_timeout); 0 = unbounded.
	BodyTimeout time.Duration
	// ListenHost is the host part of the listen address, served as a literal Host.
	ListenHost string
	// StoreConnected reports whether the connection to a shared store is up (mode c); while it is not, /readyz
	// fails so a load balancer sends clients to another node. nil = nothing to check. Lag never fails it.
	StoreConnected func() bool

	hosts   originpolicy.Hosts   // Set by Handler.
	origins originpolicy.Origins // Set by Handler.

	draining  atomic.Bool
	drainOnce sync.Once
	closeOnce sync.Once
	drain     chan struct{} // closed by EndStreams: event streams end so shutdown does not wait on them
}

func (s *Server) drainCh() <-chan struct{} {
	s.drainOnce.Do(func() { s.drain = make(chan struct{}) })
	return s.drain
}

// SetDraining makes /readyz fail and new sessions be refused while the gateway shuts down. Event streams go
// on, so they still carry how their sessions end; EndStreams ends them.
func (s *Server) SetDraining() { s.draining.Store(true) }

// EndStreams ends every event stream once caught up (and refuses like SetDraining): the last step of a
// shutdown, after the sessions have told their clients why.
func (s *Server) EndStreams() {
	s.SetDraining()
	s.drainCh()
	s.closeOnce.Do(func() { close(s.drain) })
}

// handlerFunc is an HTTP handler that returns its error for writeError to render.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (h handlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h(w, r); err != nil {
		writeError(w, err)
	}
}

// Handler returns the router.
func (s *Server) Handler() http.Handler {
	if s.MaxBodyBytes <= 0 {
		s.MaxBodyBytes = 4 << 20
	}
	s.hosts = originpolicy.Hosts{Restrict: s.Auth == nil || len(s.AllowedHosts) > 0, ListenHost: s.ListenHost, Patterns: s.AllowedHosts}
	s.origins = originpolicy.NewOrigins(s.AllowedOrigins)
	r := chi.NewRouter()
	r.Use(connlimit.TrackBusy, s.observe, s.limitBodyTime, s.guardHost, s.guardOrigin, s.authenticate)
	r.NotFound(handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return problem(http.StatusNotFound, "route_not_found", "no route "+r.Method+" "+truncate(r.URL.Path, 200))
	}).ServeHTTP)
	r.MethodNotAllowed(handlerFunc(func(w http.ResponseWriter, req *http.Request) error {
		w.Header().Set("Allow", strings.Join(allowedMethods(r, req.URL.Path), ", "))
		return problem(http.StatusMethodNotAllowed, "method_not_allowed", req.Method+" is not allowed on this route")
	}).ServeHTTP)

	r.Method(http.MethodGet, "/healthz", handlerFunc(s.healthz))
	r.Method(http.MethodGet, "/readyz", handlerFunc(s.readyz))
	r.Method(http.MethodGet, "/openapi.yaml", handlerFunc(s.openapi))
	// Raw ACP: a WebSocket upgrade, or Streamable HTTP (POST a message, GET an SSE stream, DELETE the
	// connection); acpws tells them apart and answers a plain GET with 426 itself.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		r.Method(m, "/acp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.ACP.ServeAgent(w, r, "")
		}))
		r.Method(m, "/acp/{agent}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.ACP.ServeAgent(w, r, chi.URLParam(r, "agent"))
		}))
	}
	if s.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", adminOnly(s.Metrics.Handler()))
	}
	r.Route("/v1", func(r chi.Router) {
		r.Method(http.MethodGet, "/me", handlerFunc(s.me))
		r.Method(http.MethodGet, "/agents", handlerFunc(s.listAgents))
		r.Method(http.MethodGet, "/agents/{agent}/login", handlerFunc(s.getLogin))
		r.Method(http.MethodDelete, "/agents/{agent}/login", handlerFunc(s.deleteLogin))
		r.Method(http.MethodPut, "/agents/{agent}/login/env", handlerFunc(s.putLoginEnv))
		r.Method(http.MethodPost, "/agents/{agent}/login/agent", handlerFunc(s.postLoginAgent))
		r.Route("/agents/{agent}/login/terminal", func(r chi.Router) {
			r.Method(http.MethodPost, "/", handlerFunc(s.startTerminalLogin))
			r.Method(http.MethodGet, "/{loginId}", requireUpgrade(s.serveTerminalLogin))
			r.Method(http.MethodDelete, "/{loginId}", handlerFunc(s.cancelTerminalLogin))
			r.Method(http.MethodGet, "/{loginId}/callback/{port}/*", handlerFunc(s.loginCallback))
		})
		r.Method(http.MethodGet, "/nodes", handlerFunc(s.listNodes))
		r.Method(http.MethodGet, "/workspace/dirs", handlerFunc(s.workspaceDirs))
		r.Method(http.MethodPost, "/ws-tickets", handlerFunc(s.wsTicket))
		r.Method(http.MethodGet, "/sessions", handlerFunc(s.listSessions))
		r.Method(http.MethodPost, "/sessions", handlerFunc(s.createSession))
		r.Route("/sessions/{id}", func(r chi.Router) {
			r.Method(http.MethodGet, "/", handlerFunc(s.getSession))
			r.Method(http.MethodDelete, "/", handlerFunc(s.deleteSession))
			r.Method(http.MethodPost, "/fork", handlerFunc(s.forkSession))
			r.Method(http.MethodPatch, "/", handlerFunc(s.renameSession))
			r.Method(http.MethodGet, "/files", handlerFunc(s.listFiles))
			r.Method(http.MethodPost, "/prompt", handlerFunc(s.prompt))
			r.Method(http.MethodGet, "/turn", handlerFunc(s.getTurn))
			r.Method(http.MethodPost, "/cancel", handlerFunc(s.cancel))
			r.Method(http.MethodPost, "/mode", handlerFunc(s.setMode))
			r.Method(http.MethodPost, "/config", handlerFunc(s.setConfig))
			r.Method(http.MethodGet, "/permissions", handlerFunc(s.listPermissions))
			r.Method(http.MethodGet, "/events", handlerFunc(s.events))
			r.Method(http.MethodPost, "/permissions/{permissionId}", handlerFunc(s.answerPermission))
			r.Method(http.MethodGet, "/elicitations", handlerFunc(s.listElicitations))
			r.Method(http.MethodPost, "/elicitations/{elicitationId}", handlerFunc(s.answerElicitation))
			r.Method(http.MethodGet, "/shares", handlerFunc(s.listShares))
			r.Method(http.MethodPut, "/shares/{principal}", handlerFunc(s.putShare))
			r.Method(http.MethodDelete, "/shares/{principal}", handlerFunc(s.deleteShare))
			r.Method(http.MethodGet, "/ws", requireUpgrade(func(w http.ResponseWriter, r *http.Request) {
				s.WS.ServeSession(w, r, chi.URLParam(r, "id"))
			}))
		})
	})
	if s.Web != nil {
		r.Method(http.MethodGet, "/*", webHandler(s.Web))
	}
	return r
}

// allowedMethods lists the methods router serves on path, for the Allow header of a 405. It walks the
// routes and matches their patterns itself: chi keeps the methods it found to itself.
func allowedMethods(router chi.Routes, path string) []string {
	var allow []string
	_ = chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route != "/*" && patternMatches(route, path) && !slices.Contains(allow, method) {
			allow = append(allow, method)
		}
		return nil
	})
	slices.Sort(allow)
	return allow
}

// patternMatches matches a chi route pattern ("/v1/sessions/{id}/") against a path, "{…}" being one segment.
func patternMatches(pattern, path string) bool {
	ps := strings.Split(strings.TrimSuffix(pattern, "/"), "/")
	xs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") {
			if xs[i] == "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}

// requireUpgrade answers a plain request to a WebSocket route with 426 in the API's error format, before
// the WebSocket library would answer it in plain text.
func requireUpgrade(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isUpgrade(r) {
			w.Header().Set("Upgrade", "websocket")
			w.Header().Set("Connection", "Upgrade")
			writeError(w, problem(http.StatusUpgradeRequired, "upgrade_required", "this route is a WebSocket: send a WebSocket upgrade"))
			return
		}
		h(w, r)
	})
}

func (s *Server) streamLimits() eventlog.FollowLimits {
	lim := eventlog.FollowLimits{Frames: s.StreamQueueFrames, Bytes: s.StreamQueueBytes}
	if lim.Frames <= 0 {
		lim.Frames = 4096
	}
	if lim.Bytes <= 0 {
		lim.Bytes = 16 << 20
	}
	return lim
}

func (s *Server) streamWriteTimeout() time.Duration {
	if s.StreamWriteTimeout <= 0 {
		return 10 * time.Second
	}
	return s.StreamWriteTimeout
}

func (s *Server) sseHeartbeat() time.Duration {
	if s.SSEHeartbeat <= 0 {
		return 15 * time.Second
	}
	return s.SSEHeartbeat
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	body := map[string]string{"status": "ok", "version": s.Version}
	if s.Commit != "" {
		body["commit"] = s.Commit
	}
	if s.BuildDate != "" {
		body["date"] = s.BuildDate
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return problem(http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
	}
	if s.StoreConnected != nil && !s.StoreConnected() {
		return problem(http.StatusServiceUnavailable, "store_unavailable", "the gateway is not connected to its NATS cluster, or the cluster takes no writes (no quorum)")
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "agents": len(s.Registry.Agents())})
	return nil
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(s.OpenAPI)
	return err
}

// agentsListWait bounds how long listing the agents waits for the probes it starts: an agent slow to answer
// initialize must not hold every listing (and the UI's composer) for the whole start timeout. Probes go on in
// the background; a later listing shows what they found.
const agentsListWait = 2 * time.Second

// listAgents lists the agents with what each answered to initialize, probing those not asked yet (in
// parallel, waiting at most agentsListWait; a failure is remembered, so a broken agent is not started on every
// listing).
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), agentsListWait)
	defer cancel()
	writeJSON(w, http.StatusOK, map[string]any{"agents": s.Registry.ProbedAgents(ctx), "default": s.Registry.DefaultAgent()})
	return nil
}

// webHandler serves the embedded UI with headers that forbid inline script and framing.
func webHandler(files fs.FS) http.Handler {
	fsrv := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		fsrv.ServeHTTP(w, r)
	})
}

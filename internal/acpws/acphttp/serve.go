package acphttp

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/conngroup"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/google/uuid"
)

// The Streamable HTTP headers (the official transport's names).
const (
	HeaderConnectionID = "Acp-Connection-Id"
	headerSessionID    = "Acp-Session-Id"
	maxIDLength        = 1024 // the longest Acp-Session-Id accepted, as the official server
)

// Conn is the ACP connection a Transport carries (acpws's): its methods, attachments and writer.
type Conn interface {
	// Dispatch handles one client message.
	Dispatch(data []byte)
	// AttachedSession is the session of this id the connection attached and may still see, else nil.
	AttachedSession(id string) *sessions.Session
	// Run serves the connection until it ends, its transport included.
	Run()
}

// Config is what the Streamable HTTP transport needs of the `/acp` face: its registry, connection caps and
// counters, and its bounds and durations (acpws.Options with its defaults applied).
type Config struct {
	Registry *sessions.Registry // a session the caller may see but did not attach is a 409
	Conns    *conngroup.Group   // the face's open connections; closing it is the shutdown signal
	Face     *metrics.Face      // the face's counters
	// Acquire takes one of the face's connection slots for who, or answers the refusal on w and returns nil.
	Acquire func(w http.ResponseWriter, who principal.Principal) (release func())
	// NewConn makes the connection t carries, acting as the principal in ctx; Serve runs it until it ends.
	NewConn func(ctx context.Context, t *Transport, agent string) Conn

	Inbound      *inbound.Budget // the bound of client bytes held by readers; nil = unbounded
	ReadLimit    int64           // the largest body accepted
	QueueBytes   int64           // bytes queued across a connection's streams before its writer waits
	IdleTimeout  time.Duration   // a connection with no stream and no request for this long ends
	WriteTimeout time.Duration   // one SSE write
	PingInterval time.Duration   // keep-alive comments on an idle stream
	Logger       *slog.Logger
}

// Server serves the Streamable HTTP requests of `/acp` and holds their connections.
type Server struct {
	cfg   Config // Static after construction.
	conns conns  // by Acp-Connection-Id
}

// NewServer returns the Streamable HTTP transport of the `/acp` face.
func NewServer(cfg Config) *Server { return &Server{cfg: cfg} }

// Serve serves a Streamable HTTP request: POST a message, GET a stream, DELETE the connection.
func (h *Server) Serve(w http.ResponseWriter, r *http.Request, agent string) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, agent)
	case http.MethodGet:
		h.stream(w, r, agent)
	case http.MethodDelete:
		h.deleteConn(w, r, agent)
	default:
		w.Header().Set("Allow", "DELETE, GET, POST")
		frameout.WriteProblem(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on this route")
	}
}

// connection finds the connection a request names, answering 400/404 itself when there is none.
func (h *Server) connection(w http.ResponseWriter, r *http.Request, agent string) *Transport {
	id := r.Header.Get(HeaderConnectionID)
	if id == "" {
		frameout.WriteProblem(w, http.StatusBadRequest, "missing_connection_id", "the request needs the Acp-Connection-Id header the initialize answer carried")
		return nil
	}
	t := h.conns.get(id)
	// Another principal's connection answers as one that does not exist, like another's session.
	if t == nil || t.agent != agent || t.owner != principal.From(r.Context()).ID {
		frameout.WriteProblem(w, http.StatusNotFound, "unknown_connection", "no open ACP connection has this Acp-Connection-Id: initialize a new one")
		return nil
	}
	return t
}

func (h *Server) post(w http.ResponseWriter, r *http.Request, agent string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		frameout.WriteProblem(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "POST one JSON-RPC message as application/json")
		return
	}
	f, err := h.cfg.Inbound.ReadBody(r.Context(), r.Body, h.cfg.ReadLimit)
	switch {
	case errors.Is(err, inbound.ErrTooBig):
		frameout.WriteProblem(w, http.StatusRequestEntityTooLarge, "body_too_large", "the message is larger than the gateway's frame limit")
		return
	case errors.Is(err, inbound.ErrBusy):
		frameout.WriteRetryProblem(w, http.StatusServiceUnavailable, "inbound_busy", "the gateway holds as many client bytes as it may: try again", 1)
		return
	case errors.Is(err, inbound.ErrInvalidUTF8):
		writeRPCError(w, &postError{jsonrpc.ParseError, "Parse error: the body is not valid UTF-8"})
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		frameout.WriteProblem(w, http.StatusRequestTimeout, "body_timeout", "the request body did not arrive in time")
		return
	case err != nil:
		frameout.WriteProblem(w, http.StatusBadRequest, "bad_request", "the request body could not be read")
		return
	}
	defer f.Release()
	m, perr := parsePost(f.Data)
	if perr != nil {
		writeRPCError(w, perr)
		return
	}
	connID := r.Header.Get(HeaderConnectionID)
	if m.initialize {
		if connID != "" {
			frameout.WriteProblem(w, http.StatusBadRequest, "initialize_on_connection", "initialize opens a connection: send it without Acp-Connection-Id")
			return
		}
		h.initializeHTTP(w, r, agent, &f, m)
		return
	}
	t := h.connection(w, r, agent)
	if t == nil {
		return
	}
	session, ok := h.checkSession(w, r, t, m)
	if !ok {
		return
	}
	if !t.enter() {
		frameout.WriteProblem(w, http.StatusNotFound, "unknown_connection", "the ACP connection has ended: initialize a new one")
		return
	}
	defer t.leave()
	if m.isRequest() {
		t.expect(m.id, route{session: session})
	}
	t.c.Dispatch(f.Data)
	w.WriteHeader(http.StatusAccepted)
}

// checkSession checks a request's Acp-Session-Id and returns the session it is about ("" = none). A
// session-scoped method needs the header; a params.sessionId must match it; a session the connection has
// not attached is a 409 for the methods that act on an attached session.
func (h *Server) checkSession(w http.ResponseWriter, r *http.Request, t *Transport, m postMessage) (string, bool) {
	if m.method == "" {
		return "", true // a response to the gateway's request: it knows where it goes
	}
	header := r.Header.Get(headerSessionID)
	switch {
	case len(header) > maxIDLength:
		frameout.WriteProblem(w, http.StatusBadRequest, "invalid_session_id", "Acp-Session-Id is too long")
		return "", false
	case header == "" && (sessionScoped[m.method] || m.paramsSession != ""):
		frameout.WriteProblem(w, http.StatusBadRequest, "missing_session_id", m.method+" needs the Acp-Session-Id header")
		return "", false
	case header != "" && m.paramsSession != "" && header != m.paramsSession:
		frameout.WriteProblem(w, http.StatusBadRequest, "mismatched_session_id", "Acp-Session-Id differs from params.sessionId")
		return "", false
	}
	if needsAttachment[m.method] && t.c.AttachedSession(header) == nil {
		if _, err := h.cfg.Registry.GetAs(principal.From(r.Context()), header); err == nil {
			frameout.WriteProblem(w, http.StatusConflict, "session_not_attached", "the session is not attached to this connection: re-attach it with session/load or session/resume")
			return "", false
		}
	}
	return header, true
}

// initializeHTTP opens a connection: its answer is the POST's own response, with the connection's id.
// The POST counts as activity until it is answered: an agent slow to start (the first initialize probes
// it) does not make the connection idle. The body's budget is released once dispatched.
func (h *Server) initializeHTTP(w http.ResponseWriter, r *http.Request, agent string, body *inbound.Frame, m postMessage) {
	who := principal.From(r.Context())
	release := h.cfg.Acquire(w, who)
	if release == nil {
		return
	}
	if !h.cfg.Conns.Join() {
		release()
		frameout.WriteProblem(w, http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
		return
	}
	t := newTransport(h, uuid.NewString(), agent, who.ID)
	// The connection outlives this request: it ends on DELETE, when idle, or at shutdown (Config.Conns). It acts
	// as the principal who initialized it, and ends when their credentials are revoked or expire.
	ctx := principal.CarryCredentials(principal.WithContext(context.Background(), who), r.Context())
	t.c = h.cfg.NewConn(ctx, t, agent)
	t.expect(m.id, route{initial: true})
	h.conns.add(t)
	t.enter()
	h.cfg.Face.Connected(1)
	go func() {
		defer release()
		defer h.cfg.Conns.Leave()
		defer h.cfg.Face.Connected(-1)
		t.c.Run()
	}()
	defer t.leave()
	t.c.Dispatch(body.Data)
	body.Release()
	select {
	case frame := <-t.initial:
		w.Header().Set(HeaderConnectionID, t.id)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(frame)
	case <-t.ended:
		frameout.WriteProblem(w, http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
	case <-r.Context().Done():
		t.delete() // nobody will learn the connection's id
	}
}

func (h *Server) deleteConn(w http.ResponseWriter, r *http.Request, agent string) {
	t := h.connection(w, r, agent)
	if t == nil {
		return
	}
	t.delete()
	w.WriteHeader(http.StatusAccepted)
}

// writeRPCError refuses a POST body with 400 and a JSON-RPC error response (id null).
func writeRPCError(w http.ResponseWriter, e *postError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(frameout.RPCError(jsonrpc.NullID, e.code, e.msg, nil))
}

// AcceptsEventStream reports whether a GET asks for an SSE stream.
func AcceptsEventStream(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Accept")), "text/event-stream")
}

package core

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/cold"
	"github.com/acp-gateway/gateway/internal/sessions/internal/fold"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/sessions/internal/statusfold"
	"github.com/acp-gateway/gateway/internal/sessions/internal/stream"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate"
	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// Session is one conversation with one agent process.
type Session struct {
	// Static after construction.
	ID        string
	Agent     string
	Cwd       string
	Epoch     string
	Policy    string
	CreatedAt time.Time
	// AdditionalDirs are the session's ACP additionalDirectories, resolved and confined (adddirs.go).
	AdditionalDirs []string
	Owner          principal.Principal          // who created it: only they, admins and those it is shared with see it (owner.go)
	shares         access.Shares                // who the owner shared it with (share.go); its own lock
	presence       stream.Presence[*Subscriber] // who streams it now (presence.go); its own lock
	ready          agentlink.Ready              // holds a gate while start waits for session/new (package agentlink)
	host           Host                         // the registry that holds the session (host.go)
	cfg            *SessionConfig               // host.sessionConfig(), read on every update
	spec           agents.Spec
	clientMCP      []agents.MCPServer // the MCP servers the client added (mcp.go)
	svc            *services.Services // what the gateway serves the agent: fs/*, terminal/*, file listing (services.go)
	log            *eventlog.Log
	logger         *slog.Logger
	closed         chan struct{} // closed when the session is closed; faces then close their sockets with 4009
	// run is where the session's actions run (runner.go): here, or routed to the owner for a follower. Set
	// by the host before the session is shared.
	run Runner
	// forkOf is the agent session a fork's agent forks (fork.go); "" for a session that is no fork.
	forkOf string
	// beforeSnapshotJSON is a test hook: Detail calls it (when set) right before building the snapshot JSON.
	beforeSnapshotJSON func()

	mu sync.Mutex
	// agent is what the session knows of its agent (package agentlink). Guarded by mu, but for its SID: set
	// once before the session is idle and never changed after (a re-attach loads the same agent session),
	// code that runs only on a usable session reads it without mu.
	agent agentlink.Link
	// state is what the session's frames decide (status, turns, keys, pending requests, epochs, costs), folded
	// by package fold. Guarded by mu.
	state        fold.State
	tctx         *translate.Context // Guarded by mu.
	clients      int                // Guarded by mu; attached subscribers.
	closing      bool               // Guarded by mu; Close has begun: an agent exit now is expected.
	stoodDown    bool               // Guarded by mu; another node took the session over (package takeover).
	stopping     bool               // Guarded by mu; detach is stopping the agent: its exit is expected.
	detachDone   chan struct{}      // Guarded by mu; closed when the detach that set stopping has ended.
	reattaching  bool               // Guarded by mu; a prompt is re-attaching the detached session (reattach.go).
	cancelAttach context.CancelFunc // Guarded by mu; ends the re-attach in progress (Close calls it), else nil.
	noise        int                // Guarded by mu; non-JSON stdout lines seen.
	lastActive   time.Time          // Guarded by mu; last time a turn ended or a subscriber left.
	cold         *cold.State        // Guarded by mu; set while a restored session is not yet hydrated (sessions/recover.go).
	forkedAt     uint64             // Guarded by mu; the seq of the last frame a fork inherited (fork.go), else 0.
	closeOnce    sync.Once
}

// MakeOptions are what makeSession takes of a session's creation.
type MakeOptions struct {
	Cwd            string
	AdditionalDirs []string
	Policy         string
	Owner          principal.Principal
	MCPServers     []agents.MCPServer // the client's own
	// OpenCwd opens the cwd now; a follower's cwd is on its owner's machine, and a restored session's is
	// opened once a re-attach has checked it again (recheck.go).
	OpenCwd bool
}

// MakeSession makes a session held by h; the registry's newSession (registry_host.go) calls it and sets its
// runner.
func MakeSession(h Host, id string, spec agents.Spec, opts MakeOptions) *Session {
	spec = spec.ForPrincipal(opts.Owner.ID) // its own HOME when the agent has one per principal
	cfg := h.SessionConfig()
	s := &Session{
		ID:             id,
		Agent:          spec.Name,
		Cwd:            opts.Cwd,
		AdditionalDirs: opts.AdditionalDirs,
		Epoch:          uuid.NewString(),
		Policy:         opts.Policy,
		CreatedAt:      h.Now().UTC(),
		Owner:          opts.Owner,
		host:           h,
		cfg:            cfg,
		spec:           spec,
		clientMCP:      opts.MCPServers,
		log:            eventlog.NewLog(cfg.Log),
		closed:         make(chan struct{}),
		state:          fold.State{Status: store.StatusStarting},
		lastActive:     h.Now(),
	}
	s.logger = cfg.Logger.With("session", id, "agent", spec.Name)
	s.svc = s.newServices(opts.OpenCwd)
	s.tctx = translate.NewContext(translate.Config{
		SessionID: id, Cwd: opts.Cwd, MaxFieldBytes: cfg.MaxFieldBytes, Redact: cfg.Redact,
	})
	return s
}

// Log is the session's event log.
func (s *Session) Log() *eventlog.Log { return s.log }

// Closed is closed once the session is closed.
func (s *Session) Closed() <-chan struct{} { return s.closed }

// Close cancels the running turn, denies pending permissions, stops the agent and closes the log. Clients
// see `_gateway/session_status {status: closed}` as the last frame. A follower closes only this node's copy.
func (s *Session) Close(reason string) {
	s.run.CloseHere(reason)
}

// noteDir tells the host that the session's directory entry changed. It never blocks.
func (s *Session) noteDir() { s.host.EntryChanged(s) }

// closeRoot releases the cwd's descriptor; fs/* requests after it fail as "cwd gone".
func (s *Session) closeRoot() {
	s.svc.CloseRoot()
}

// SessionUpdate implements agents.Handler: translate, append, return. Never blocks on a client.
func (s *Session) SessionUpdate(params json.RawMessage) {
	s.cfg.Metrics.UpdateIn()
	s.ready.Wait()
	s.logUpdate(params)
}

// logUpdate translates and logs a session/update, the agent's or one the gateway makes (a rename).
func (s *Session) logUpdate(params json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The translated update is laid out as its frame right away, with room for the stamp: the log fills in
	// the seq under its lock, and the frame is the update's only allocation (appendLocked's general path
	// would copy and scan the params again).
	meta := translate.GatewayMeta{Epoch: s.Epoch}
	if s.state.Turn != nil {
		meta.TurnID = s.state.Turn.ID
	}
	params = agentlogin.ScrubParams(params, s.agent.Secrets)
	u, err := s.tctx.UpdateFrame(params, meta)
	if err != nil {
		s.logger.Warn("dropping malformed session/update", "err", err)
		return
	}
	if u.Kind == "usage_update" {
		s.noteUsageLocked(params)
	}
	if t := s.state.Turn; t != nil {
		t.NoteUpdate(params, &u, s.cfg.MaxTurnTextBytes)
	}
	if _, err := s.log.Append(fold.Kind("session/update", u.Kind), func(seq uint64) ([]byte, error) { return u.Frame(seq) }); err != nil && !errors.Is(err, eventlog.ErrLogClosed) {
		s.logger.Error("append to log", "method", "session/update", "err", err)
	}
}

// appendLocked logs a notification frame of kind. The caller holds s.mu, which keeps frames in the order the
// session's state changed.
func (s *Session) appendLocked(kind eventlog.Kind, method string, params []byte, meta translate.GatewayMeta) uint64 {
	meta.Epoch = s.Epoch
	seq, err := s.log.Append(kind, func(seq uint64) ([]byte, error) {
		meta.Seq = seq
		return translate.AppendNotification(nil, method, params, meta)
	})
	if err != nil && !errors.Is(err, eventlog.ErrLogClosed) {
		s.logger.Error("append to log", "method", method, "err", err)
	}
	return seq
}

// appendGatewayLocked logs a `_gateway/*` notification whose params the gateway builds.
func (s *Session) appendGatewayLocked(method, turnID string, params any) uint64 {
	b, err := json.Marshal(params)
	if err != nil {
		s.logger.Error("encode gateway notification", "method", method, "err", err)
		return 0
	}
	s.tctx.Note(method, b)
	seq := s.appendLocked(eventlog.KindGateway, method, b, translate.GatewayMeta{TurnID: turnID})
	if err := s.state.FoldStatus(method, b); err != nil {
		s.logger.Error("fold the status of a gateway notification", "method", method, "err", err)
	}
	if statusfold.States(method) {
		s.noteDir() // the directory entry lists the status and lastTurn
	}
	return seq
}

// SetMode asks the agent to switch mode and records it.
func (s *Session) SetMode(ctx context.Context, modeID string) error {
	if _, err := s.callAgent(ctx, acp.AgentMethodSessionSetMode, map[string]any{"sessionId": s.agent.SID, "modeId": modeID}); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agent.SetMode(modeID)
	s.noteDir()
	return nil
}

// SetConfigOption sets a config option and returns the agent's full, updated list.
func (s *Session) SetConfigOption(ctx context.Context, configID string, value json.RawMessage) (json.RawMessage, error) {
	res, err := s.callAgent(ctx, acp.AgentMethodSessionSetConfigOption, map[string]any{"sessionId": s.agent.SID, "configId": configID, "value": value})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	opts := s.agent.TakeConfigOptions(res)
	s.mu.Unlock()
	s.noteDir()
	return opts, nil
}

// callAgent calls the agent of the usable session with method, bounded by CallTimeout: a refusal is an
// AgentError naming method, logged.
func (s *Session) callAgent(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	conn, err := s.usable()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	res, err := conn.Call(ctx, method, params)
	if err != nil {
		ae := &sessionerr.AgentError{Op: method, Err: agentlink.CallError(ctx, err, s.cfg.CallTimeout)}
		s.logger.Warn("agent refused a request", "err", ae)
		return nil, ae
	}
	return res, nil
}

// usable reports whether the session can take requests for its agent, and returns the agent.
func (s *Session) usable() (*agents.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.state.Ended(); err != nil {
		return nil, err
	}
	switch {
	case s.state.Status == store.StatusStarting:
		return nil, sessionerr.ErrNotReady
	case s.state.Status == store.StatusDetached, s.stopping:
		return nil, sessionerr.ErrDetached
	}
	return s.agent.Conn, nil
}

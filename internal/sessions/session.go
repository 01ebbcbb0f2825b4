package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/translate"
	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// Status is a session's lifecycle state.
type Status string

// Session statuses.
const (
	StatusStarting Status = "starting"
	StatusIdle     Status = "idle"
	StatusRunning  Status = "running"
	StatusClosed   Status = "closed"
	StatusFailed   Status = "failed"
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
	reg       *Registry
	spec      agents.Spec
	log       *Log
	logger    *slog.Logger
	closed    chan struct{} // closed when the session is closed; faces then close their sockets with 4009

	// Set once by start under mu, before the session is idle (never once Close has begun); read-only
	// afterwards, so code that runs only on a usable session reads them without mu.
	conn     *agents.Conn
	agentSID string
	initInfo struct {
		AgentInfo         json.RawMessage
		AgentCapabilities json.RawMessage
		AuthMethods       json.RawMessage
	}

	mu            sync.Mutex
	status        Status                 // Guarded by mu.
	statusReason  string                 // Guarded by mu.
	modes         json.RawMessage        // Guarded by mu; SessionModeState as last known.
	configOptions json.RawMessage        // Guarded by mu.
	tctx          *translate.Context     // Guarded by mu.
	turn          *Turn                  // Guarded by mu; the running turn or nil.
	perms         map[string]*permission // Guarded by mu; pending permission requests by gateway id.
	resolved      map[string]struct{}    // Guarded by mu; ids of resolved requests (for 409), bounded.
	resolvedOrder []string               // Guarded by mu; eviction order of resolved.
	clients       int                    // Guarded by mu; attached subscribers.
	closing       bool                   // Guarded by mu; Close has begun: an agent exit now is expected.
	noise         int                    // Guarded by mu; non-JSON stdout lines seen.
	fsDelegate    *FSDelegate            // Guarded by mu; who serves fs/* instead of the gateway (nil = the gateway).
	lastActive    time.Time              // Guarded by mu; last time a turn ended or a subscriber left.
	closeOnce     sync.Once
}

func newSession(r *Registry, id string, spec agents.Spec, opts CreateOptions) *Session {
	s := &Session{
		ID:         id,
		Agent:      spec.Name,
		Cwd:        opts.Cwd,
		Epoch:      uuid.NewString(),
		Policy:     opts.PermissionPolicy,
		CreatedAt:  r.now().UTC(),
		reg:        r,
		spec:       spec,
		log:        NewLog(r.cfg.Log),
		closed:     make(chan struct{}),
		status:     StatusStarting,
		lastActive: r.now(),
		perms:      map[string]*permission{},
		resolved:   map[string]struct{}{},
	}
	s.logger = r.cfg.Logger.With("session", id, "agent", spec.Name)
	s.tctx = translate.NewContext(translate.Config{
		SessionID: id, Cwd: opts.Cwd, MaxFieldBytes: r.cfg.MaxFieldBytes, Redact: r.cfg.Redact,
	})
	return s
}

// Log is the session's event log.
func (s *Session) Log() *Log { return s.log }

// Closed is closed once the session is closed.
func (s *Session) Closed() <-chan struct{} { return s.closed }

// start launches the agent and opens the ACP session.
func (s *Session) start(ctx context.Context) error {
	cfg := s.reg.cfg
	conn, err := agents.Start(s.spec, agents.Options{
		Cwd: s.Cwd, Env: cfg.AgentEnv, Handler: s, Logger: s.logger, StopGrace: cfg.StopGrace,
	})
	if err != nil {
		return &AgentError{Op: "start agent", Err: err}
	}
	cfg.Metrics.AgentStarted(s.Agent)
	fail := func(op string, err error) error {
		conn.Stop()
		return &AgentError{Op: op, Err: err, Stderr: conn.Stderr()}
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	// The gateway serves fs/* itself, confined to the session cwd (fs.go). No terminals.
	initRes, err := conn.Call(ictx, acp.AgentMethodInitialize, map[string]any{
		"protocolVersion":    acp.ProtocolVersionNumber,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": true, "writeTextFile": true}, "terminal": false},
		"clientInfo":         map[string]string{"name": "acp-gateway", "version": cfg.Version},
	})
	if err != nil {
		return fail("initialize", callError(ictx, err, cfg.StartTimeout))
	}
	var ir struct {
		ProtocolVersion   int             `json:"protocolVersion"`
		AgentInfo         json.RawMessage `json:"agentInfo"`
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
		AuthMethods       json.RawMessage `json:"authMethods"`
	}
	if err := json.Unmarshal(initRes, &ir); err != nil {
		return fail("initialize", fmt.Errorf("malformed response: %w", err))
	}
	if ir.ProtocolVersion != acp.ProtocolVersionNumber {
		return fail("initialize", fmt.Errorf("agent speaks ACP protocol version %d, the gateway speaks %d", ir.ProtocolVersion, acp.ProtocolVersionNumber))
	}
	s.initInfo.AgentInfo, s.initInfo.AgentCapabilities, s.initInfo.AuthMethods = ir.AgentInfo, ir.AgentCapabilities, ir.AuthMethods
	if m := s.spec.AuthMethod; m != "" {
		actx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
		_, err := conn.Call(actx, acp.AgentMethodAuthenticate, map[string]any{"methodId": m})
		if err != nil {
			err = callError(actx, err, cfg.StartTimeout)
			cancel()
			return fail("authenticate "+m, err)
		}
		cancel()
	}

	nctx, cancel2 := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel2()
	newRes, err := conn.Call(nctx, acp.AgentMethodSessionNew, map[string]any{"cwd": s.Cwd, "mcpServers": []any{}})
	if err != nil {
		return fail("session/new", callError(nctx, err, cfg.StartTimeout))
	}
	var nr struct {
		SessionID     string          `json:"sessionId"`
		Modes         json.RawMessage `json:"modes"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	if err := json.Unmarshal(newRes, &nr); err != nil || nr.SessionID == "" {
		return fail("session/new", errors.New("malformed response: no sessionId"))
	}
	s.mu.Lock()
	if s.closing {
		// Closed (gateway shutdown) while starting: Close found no agent to stop, so stop it here.
		s.mu.Unlock()
		conn.Stop()
		return ErrClosed
	}
	s.conn, s.agentSID = conn, nr.SessionID
	s.modes, s.configOptions = nullToNil(nr.Modes), nullToNil(nr.ConfigOptions)
	if s.status == StatusStarting {
		s.status = StatusIdle
	}
	s.mu.Unlock()
	go s.watchAgent()
	s.logger.Info("session started", "cwd", s.Cwd, "agentSession", nr.SessionID)
	return nil
}

// callError turns an SDK error into one that says what happened: a deadline becomes "did not answer within".
func callError(ctx context.Context, err error, limit time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("agent did not answer within %s", limit)
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return rpcError{re}
	}
	return err
}

// rpcError is an agent's JSON-RPC error, readable for people and still an *acp.RequestError for errors.As.
type rpcError struct{ re *acp.RequestError }

func (e rpcError) Error() string { return fmt.Sprintf("agent error %d: %s", e.re.Code, e.re.Message) }
func (e rpcError) Unwrap() error { return e.re }

func nullToNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// watchAgent fails the session when its agent goes away while the session is open.
func (s *Session) watchAgent() {
	<-s.conn.Done()
	s.mu.Lock()
	if s.status == StatusClosed || s.status == StatusFailed {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	// Give the process a moment to be reaped so the reason carries its exit status.
	t := time.NewTimer(time.Second)
	select {
	case <-s.conn.Exited():
	case <-t.C:
	}
	t.Stop()
	reason := "agent connection closed"
	if s.conn.LineTooLong() {
		reason = "agent wrote a stdout line over 10 MiB (the ACP SDK's limit); the connection was closed"
	}
	select {
	case <-s.conn.Exited():
		switch err := s.conn.ExitErr(); {
		case s.conn.LineTooLong():
		case err != nil:
			reason = "agent exited: " + err.Error()
		default:
			reason = "agent exited"
		}
	default:
	}
	s.fail(reason)
}

// fail marks the session failed: pending permissions are denied, clients are told, the agent is stopped. The
// running turn (if any) ends through its own goroutine when the agent call returns.
func (s *Session) fail(reason string) {
	s.mu.Lock()
	if s.closing || s.status == StatusClosed || s.status == StatusFailed {
		s.mu.Unlock()
		return
	}
	s.status, s.statusReason = StatusFailed, reason
	answers := s.denyPendingLocked("", "agent_exit", "agent exited")
	s.appendGatewayLocked("_gateway/session_status", "", map[string]any{"status": StatusFailed, "reason": reason})
	s.mu.Unlock()
	deliver(answers)
	s.reg.cfg.Metrics.AgentExited(s.Agent, true)
	s.logger.Warn("session failed", "reason", reason, "stderr", tail(s.conn.Stderr(), 2048))
	go s.conn.Stop()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// SessionUpdate implements agents.Handler: translate, append, return. Never blocks on a client.
func (s *Session) SessionUpdate(params json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reg.cfg.Metrics.UpdateIn()
	// The translated update is laid out as its frame right away, with room for the stamp: the log fills in
	// the seq under its lock, and the frame is the update's only allocation (appendLocked's general path
	// would copy and scan the params again).
	meta := translate.GatewayMeta{Epoch: s.Epoch}
	if s.turn != nil {
		meta.TurnID = s.turn.ID
	}
	u, err := s.tctx.UpdateFrame(params, meta)
	if err != nil {
		s.logger.Warn("dropping malformed session/update", "err", err)
		return
	}
	if s.turn != nil {
		u.WriteText(&s.turn.text)
	}
	if _, err := s.log.Append(func(seq uint64) ([]byte, error) { return u.Frame(seq) }); err != nil && !errors.Is(err, errLogClosed) {
		s.logger.Error("append to log", "method", "session/update", "err", err)
	}
}

// appendLocked logs a notification frame. The caller holds s.mu, which keeps frames in the order the
// session's state changed.
func (s *Session) appendLocked(method string, params []byte, meta translate.GatewayMeta) uint64 {
	meta.Epoch = s.Epoch
	seq, err := s.log.Append(func(seq uint64) ([]byte, error) {
		meta.Seq = seq
		return translate.AppendNotification(nil, method, params, meta)
	})
	if err != nil && !errors.Is(err, errLogClosed) {
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
	return s.appendLocked(method, b, translate.GatewayMeta{TurnID: turnID})
}

// SetMode asks the agent to switch mode and records it.
func (s *Session) SetMode(ctx context.Context, modeID string) error {
	if err := s.usable(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.reg.cfg.CallTimeout)
	defer cancel()
	if _, err := s.conn.Call(ctx, acp.AgentMethodSessionSetMode, map[string]any{"sessionId": s.agentSID, "modeId": modeID}); err != nil {
		return &AgentError{Op: "session/set_mode", Err: callError(ctx, err, s.reg.cfg.CallTimeout)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.modes) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(s.modes, &m) == nil {
			m["currentModeId"], _ = json.Marshal(modeID)
			s.modes, _ = json.Marshal(m)
		}
	}
	return nil
}

// SetConfigOption sets a config option and returns the agent's full, updated list.
func (s *Session) SetConfigOption(ctx context.Context, configID string, value json.RawMessage) (json.RawMessage, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.reg.cfg.CallTimeout)
	defer cancel()
	res, err := s.conn.Call(ctx, acp.AgentMethodSessionSetConfigOption, map[string]any{"sessionId": s.agentSID, "configId": configID, "value": value})
	if err != nil {
		return nil, &AgentError{Op: "session/set_config_option", Err: callError(ctx, err, s.reg.cfg.CallTimeout)}
	}
	var r struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	_ = json.Unmarshal(res, &r)
	s.mu.Lock()
	if len(nullToNil(r.ConfigOptions)) > 0 {
		s.configOptions = r.ConfigOptions
	}
	opts := s.configOptions
	s.mu.Unlock()
	if opts == nil {
		opts = json.RawMessage(`[]`)
	}
	return opts, nil
}

// usable reports whether the session can take requests for its agent.
func (s *Session) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.status {
	case StatusStarting:
		return ErrNotReady
	case StatusClosed:
		return ErrClosed
	case StatusFailed:
		return fmt.Errorf("%w: %s", ErrFailed, s.statusReason)
	}
	return nil
}

// Close cancels the running turn, denies pending permissions, stops the agent and closes the log. Clients
// see `_gateway/session_status {status: closed}` as the last frame.
func (s *Session) Close(reason string) {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		conn := s.conn // nil while starting: start sees closing and stops the agent itself
		t := s.turn
		if t != nil {
			t.requestCancel()
		}
		wasUsable := s.status == StatusIdle || s.status == StatusRunning
		answers := s.denyPendingLocked("", "close", "session closed")
		s.mu.Unlock()
		deliver(answers)
		if t != nil && wasUsable {
			_ = conn.Notify(context.Background(), acp.AgentMethodSessionCancel, map[string]any{"sessionId": s.agentSID})
		}
		if conn != nil {
			// Wait a little for the agent's own answer to the cancel before stopping it.
			if t != nil {
				w := time.NewTimer(s.reg.cfg.StopGrace)
				select {
				case <-t.done:
				case <-w.C:
				}
				w.Stop()
			}
			conn.Stop()
			if wasUsable {
				s.reg.cfg.Metrics.AgentExited(s.Agent, false)
			}
		}
		if t != nil {
			<-t.done
		}
		s.mu.Lock()
		s.status, s.statusReason = StatusClosed, reason
		s.appendGatewayLocked("_gateway/session_status", "", map[string]any{"status": StatusClosed, "reason": reason})
		s.mu.Unlock()
		s.log.Close()
		close(s.closed)
		s.reg.remove(s.ID)
		s.logger.Info("session closed", "reason", reason)
	})
	<-s.closed
}

// View is a session as REST clients see it.
type View struct {
	ID                 string           `json:"id"`
	Title              string           `json:"title,omitempty"`
	Agent              string           `json:"agent"`
	Cwd                string           `json:"cwd"`
	Status             Status           `json:"status"`
	StatusReason       string           `json:"statusReason,omitempty"`
	Epoch              string           `json:"epoch"`
	LastSeq            uint64           `json:"lastSeq"`
	CreatedAt          time.Time        `json:"createdAt"`
	PermissionPolicy   string           `json:"permissionPolicy"`
	Modes              json.RawMessage  `json:"modes,omitempty"`
	ConfigOptions      json.RawMessage  `json:"configOptions,omitempty"`
	AgentInfo          json.RawMessage  `json:"agentInfo,omitempty"`
	AgentCapabilities  json.RawMessage  `json:"agentCapabilities,omitempty"`
	CurrentTurn        *TurnView        `json:"currentTurn"`
	PendingPermissions []PermissionView `json:"pendingPermissions"`
}

// TurnView is the running turn as clients see it.
type TurnView struct {
	TurnID          string    `json:"turnId"`
	StartedAt       time.Time `json:"startedAt"`
	CancelRequested bool      `json:"cancelRequested"`
}

// View returns the session's current state. LastSeq is the seq of the newest frame the view reflects.
func (s *Session) View() View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewLocked()
}

func (s *Session) viewLocked() View {
	_, last := s.log.Bounds()
	v := View{
		ID: s.ID, Title: s.tctx.Title(), Agent: s.Agent, Cwd: s.Cwd, Status: s.status, StatusReason: s.statusReason, Epoch: s.Epoch,
		LastSeq: last, CreatedAt: s.CreatedAt, PermissionPolicy: s.Policy,
		Modes: s.modes, ConfigOptions: s.configOptions,
		AgentInfo: nullToNil(s.initInfo.AgentInfo), AgentCapabilities: nullToNil(s.initInfo.AgentCapabilities),
		PendingPermissions: s.pendingViewsLocked(),
	}
	if t := s.turn; t != nil {
		v.CurrentTurn = &TurnView{TurnID: t.ID, StartedAt: t.StartedAt, CancelRequested: t.cancelRequested}
	}
	return v
}

// Status returns the session's status.
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// textOf concatenates the text blocks of a prompt, for logs.
func textOf(blocks []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range blocks {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// Detail is View plus the snapshot of the transcript; LastSeq and the snapshot's seq are the same point.
type Detail struct {
	View
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// Detail returns the session with its snapshot, consistent with one seq, so a client can load it and then
// stream with `after=lastSeq`.
func (s *Session) Detail() Detail {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.viewLocked()
	return Detail{View: v, Snapshot: s.tctx.Snapshot(v.LastSeq)}
}

// Replay returns the transcript as `session/update` params for an ACP `session/load`, and the seq it reflects.
func (s *Session) Replay() ([][]byte, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, last := s.log.Bounds()
	return s.tctx.Replay(), last
}

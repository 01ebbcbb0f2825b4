package demo

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents/inproc"
)

// agent implements acp.Agent for one connection. Every handler that sends
// something to the peer runs inside work, so Serve can wait for it.
type agent struct {
	opts Options      // Static after construction.
	out  *watchWriter // Static after construction.
	work inproc.Tracker

	// base is cancelled when Serve starts shutting down; turns and helper
	// goroutines derive from it. Static after construction.
	base context.Context
	stop context.CancelFunc

	// conn is set by Serve before the SDK reads its first message (see
	// inproc.Agent.Attach), so handlers may use it freely.
	conn *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[acp.SessionId]*session // Guarded by mu.
}

var _ acp.Agent = (*agent)(nil)

func newAgent(opts Options, out *watchWriter) *agent {
	base, stop := context.WithCancel(context.Background())
	return &agent{
		opts:     opts,
		out:      out,
		base:     base,
		stop:     stop,
		sessions: make(map[acp.SessionId]*session),
	}
}

// errShuttingDown answers requests that arrive while Serve is returning.
var errShuttingDown = acp.NewInternalError(map[string]any{"error": "demo agent is shutting down"})

// Initialize implements acp.Agent.
func (a *agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "demo", Title: acp.Ptr("Demo agent"), Version: "0.1.0"},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acp.PromptCapabilities{Image: false, Audio: false, EmbeddedContext: true},
		},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

// Authenticate implements acp.Agent. The demo agent offers no methods.
func (a *agent) Authenticate(_ context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"error": "no authentication methods", "methodId": p.MethodId})
}

// NewSession implements acp.Agent.
func (a *agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if !filepath.IsAbs(p.Cwd) {
		return acp.NewSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path"})
	}
	if !a.work.Enter() {
		return acp.NewSessionResponse{}, errShuttingDown
	}
	defer a.work.Leave()

	s := newSession(inproc.NewSessionID("demo"), p.Cwd)
	s.announced = make(chan struct{})
	a.mu.Lock()
	a.sessions[s.id] = s
	resp := acp.NewSessionResponse{SessionId: s.id, Modes: s.modeState(), ConfigOptions: s.configOptions()}
	a.mu.Unlock()

	// The commands may only follow the response: before it the client does
	// not know the session id. The SDK writes the response after we return,
	// so wait for it on the wire. We are inside work, so enter succeeds.
	marker := `"sessionId":"` + string(s.id) + `"`
	written := a.out.watch(marker)
	a.work.Enter()
	go func() {
		defer a.work.Leave()
		defer close(s.announced)
		select {
		case <-written:
		case <-a.base.Done():
			a.out.unwatch(marker)
			return
		}
		_ = a.conn.SessionUpdate(a.base, acp.SessionNotification{SessionId: s.id, Update: availableCommands()})
	}()
	return resp, nil
}

// Cancel implements acp.Agent: it stops the session's running turn, if any.
func (a *agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[p.SessionId]; s != nil && s.cancelTurn != nil {
		s.cancelTurn()
	}
	return nil
}

// LoadSession implements acp.AgentLoader as a no-op: the agent keeps no
// history, so it replays nothing and starts the session afresh under the
// client's id (modes and style back to their defaults). A gateway that
// re-attaches a detached session already has the transcript.
func (a *agent) LoadSession(_ context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if !filepath.IsAbs(p.Cwd) {
		return acp.LoadSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path"})
	}
	if p.SessionId == "" {
		return acp.LoadSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "sessionId is required"})
	}
	if !a.work.Enter() {
		return acp.LoadSessionResponse{}, errShuttingDown
	}
	defer a.work.Leave()

	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[p.SessionId]
	if s == nil {
		s = newSession(p.SessionId, p.Cwd)
		a.sessions[s.id] = s
	}
	return acp.LoadSessionResponse{Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
}

// ListSessions, ResumeSession and CloseSession are not advertised in the
// capabilities, so they are "method not found".

// ListSessions implements acp.Agent.
func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

// ResumeSession implements acp.Agent.
func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

// CloseSession implements acp.Agent.
func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

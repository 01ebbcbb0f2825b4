package events

import (
	"context"
	"path/filepath"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents/inproc"
)

// agent implements acp.Agent for one connection.
type agent struct {
	cfg  Config // Static after construction.
	work inproc.Tracker

	// base is cancelled when Serve starts shutting down; turns and permission requests derive from it.
	// Static after construction.
	base context.Context
	stop context.CancelFunc

	// conn is set by Serve before the SDK reads its first message (see inproc.Agent.Attach).
	conn *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[acp.SessionId]*session // Guarded by mu.
	closing  bool                       // Guarded by mu; no session is created once set.
}

var _ acp.Agent = (*agent)(nil)

func newAgent(cfg Config) *agent {
	base, stop := context.WithCancel(context.Background())
	return &agent{cfg: cfg, base: base, stop: stop, sessions: map[acp.SessionId]*session{}}
}

// shutdown ends every turn and stops every process (close stdin → grace → SIGTERM → grace → SIGKILL to the
// group), concurrently, and returns once all are reaped and their readers have ended.
func (a *agent) shutdown() {
	a.stop()
	a.mu.Lock()
	a.closing = true
	ss := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.shutdown()
		}()
	}
	wg.Wait()
}

var errShuttingDown = acp.NewInternalError(map[string]any{"error": "events agent is shutting down"})

func (a *agent) session(id acp.SessionId) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// Initialize implements acp.Agent.
func (a *agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: a.cfg.Name, Version: "1"},
		AgentCapabilities: acp.AgentCapabilities{
			PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true},
		},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

// Authenticate implements acp.Agent. No methods are offered.
func (a *agent) Authenticate(_ context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"error": "no authentication methods", "methodId": p.MethodId})
}

// NewSession implements acp.Agent: it starts the process for the session.
func (a *agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if !filepath.IsAbs(p.Cwd) {
		return acp.NewSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path"})
	}
	if !a.work.Enter() {
		return acp.NewSessionResponse{}, errShuttingDown
	}
	defer a.work.Leave()
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		return acp.NewSessionResponse{}, errShuttingDown
	}
	id := inproc.NewSessionID("events")
	s, err := startSession(a, id, filepath.Clean(p.Cwd))
	if err != nil {
		a.mu.Unlock()
		a.cfg.Logger.Warn("events agent: start failed", "command", a.cfg.Command, "err", err)
		return acp.NewSessionResponse{}, acp.NewInternalError(map[string]any{"error": "cannot start agent process: " + err.Error()})
	}
	a.sessions[id] = s
	a.mu.Unlock()
	return acp.NewSessionResponse{SessionId: id}, nil
}

// Prompt implements acp.Agent. The turn does not derive from the request's context: acp-go-sdk cancels it
// when a second prompt for the session arrives, and that prompt is refused instead.
func (a *agent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	if !a.work.Enter() {
		return acp.PromptResponse{}, errShuttingDown
	}
	defer a.work.Leave()
	s := a.session(p.SessionId)
	if s == nil {
		return acp.PromptResponse{}, inproc.UnknownSession(p.SessionId)
	}
	return s.prompt(p.Prompt)
}

// Cancel implements acp.Agent.
func (a *agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	if s := a.session(p.SessionId); s != nil {
		s.cancel()
	}
	return nil
}

// CloseSession, ListSessions, ResumeSession, SetSessionMode and SetSessionConfigOption are not advertised.

// CloseSession implements acp.Agent.
func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

// ListSessions implements acp.Agent.
func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

// ResumeSession implements acp.Agent.
func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

// SetSessionMode implements acp.Agent.
func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}

// SetSessionConfigOption implements acp.Agent.
func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

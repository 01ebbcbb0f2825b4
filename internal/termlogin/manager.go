package termlogin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/google/uuid"
)

// Errors of Start and Get; the HTTP face maps each to a stable code.
var (
	ErrUnknownAgent   = errors.New("unknown agent")
	ErrNoLogin        = errors.New("the agent has no login command")         // a built-in agent
	ErrUnknownMethod  = errors.New("no terminal auth method of this id")     // not among the agent's authMethods
	ErrMethodsUnknown = errors.New("the agent's auth methods are not known") // its initialize failed
	ErrNotFound       = errors.New("no such login")
	ErrShuttingDown   = errors.New("the gateway is shutting down")
)

// InProgressError is Start's answer while the principal's earlier login of the agent still runs.
type InProgressError struct{ LoginID string }

func (e *InProgressError) Error() string {
	return "a login of this agent is already running: " + e.LoginID
}

// Config configures a Manager. Zero values mean the documented defaults.
type Config struct {
	Specs []agents.Spec // the configured agents
	// AuthMethods returns the authMethods of the agent's initialize answer (the registry's probe).
	AuthMethods func(ctx context.Context, agent string) (json.RawMessage, bool)
	Env         []string          // the allowlisted environment every agent gets
	Workdir     string            // where a login runs when its agent has no HOME of its own
	Confiner    *confine.Confiner // nil = unconfined
	Lifetime    time.Duration     // a login is killed after it; 0 = 10 min
	Linger      time.Duration     // an ended login stays readable this long; 0 = 1 min
	StopGrace   time.Duration     // how long Reap waits for what a login left; 0 = 2 s
	Logger      *slog.Logger
	// AfterFunc runs f after d and returns what stops it; nil = time.AfterFunc. Tests fire deadlines with it.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	Now       func() time.Time // nil = time.Now
}

// Manager runs the terminal logins, at most one live login per principal and agent.
type Manager struct {
	// Static after construction.
	cfg   Config
	specs map[string]agents.Spec

	mu      sync.Mutex
	logins  map[string]*Login   // Guarded by mu; by id, running or lingering.
	current map[ownerKey]*Login // Guarded by mu; each principal's latest login of each agent.
	closed  bool                // Guarded by mu; set by Shutdown.
}

type ownerKey struct{ principal, agent string }

// New returns a Manager.
func New(cfg Config) *Manager {
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = 10 * time.Minute
	}
	if cfg.Linger <= 0 {
		cfg.Linger = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AfterFunc == nil {
		cfg.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Manager{cfg: cfg, specs: map[string]agents.Spec{}, logins: map[string]*Login{}, current: map[ownerKey]*Login{}}
	for _, s := range cfg.Specs {
		m.specs[s.Name] = s
	}
	return m
}

// Lifetime is how long a login may run.
func (m *Manager) Lifetime() time.Duration { return m.cfg.Lifetime }

// Start starts the terminal login methodID of agent for p, on a terminal of cols×rows.
func (m *Manager) Start(ctx context.Context, p principal.Principal, agent, methodID string, cols, rows uint16) (*Login, error) {
	spec, ok := m.specs[agent]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, agenterr.Clip(agent, 64))
	}
	if spec.Kind != agents.KindACP || spec.Command == "" {
		return nil, fmt.Errorf("%w: %q runs inside the gateway", ErrNoLogin, agent)
	}
	methods, ok := m.cfg.AuthMethods(ctx, agent)
	if !ok {
		return nil, fmt.Errorf("%w: agent %q did not answer initialize", ErrMethodsUnknown, agent)
	}
	method, ok := findMethod(methods, methodID)
	if !ok {
		return nil, fmt.Errorf("%w: agent %q offers no terminal auth method %q", ErrUnknownMethod, agent, agenterr.Clip(methodID, 128))
	}
	spec = spec.ForPrincipal(p.ID)
	if err := spec.MakeHome(); err != nil {
		return nil, fmt.Errorf("per-principal home: %w", err)
	}
	key := ownerKey{p.ID, agent}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrShuttingDown
	}
	if cur := m.current[key]; cur != nil {
		select {
		case <-cur.done:
		default:
			m.mu.Unlock()
			return nil, &InProgressError{LoginID: cur.ID}
		}
	}
	l := &Login{ID: uuid.NewString(), Agent: agent, MethodID: methodID, Owner: p.ID,
		Deadline: m.cfg.Now().Add(m.cfg.Lifetime).UTC(), tree: agents.NewProcessTree(m.cfg.StopGrace),
		done: make(chan struct{}), wake: make(chan struct{})}
	m.current[key] = l // held while starting, so a second Start meanwhile is refused
	m.logins[l.ID] = l
	m.mu.Unlock()

	args, trusted, env := commandLine(spec, method, m.cfg.Env)
	cmd := exec.Command(spec.Command, args...)
	cmd.Env = append(env, l.tree.Env())
	cmd.Dir = spec.Env["HOME"]
	if cmd.Dir == "" {
		cmd.Dir = m.cfg.Workdir
	}
	if cols == 0 || rows == 0 {
		cols, rows = 80, 24
	}
	if err := l.start(cmd, trusted, m.cfg.Confiner, spec.Confine, cols, rows); err != nil {
		m.forget(l)
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	l.killIfAsked()
	stop := m.cfg.AfterFunc(m.cfg.Lifetime, func() { l.Kill(ReasonDeadline) })
	log := m.cfg.Logger.With("agent", agent, "principal", p.ID, "method", methodID, "login", l.ID)
	log.Info("terminal login started")
	go func() {
		<-l.done
		stop()
		ex, _ := l.exitStatus()
		log.Info("terminal login ended", "exitCode", ex.ExitCode, "signal", ex.Signal, "reason", ex.Reason)
		m.cfg.AfterFunc(m.cfg.Linger, func() { m.forget(l) })
	}()
	return l, nil
}

// forget drops l from the manager (its output goes with it).
func (m *Manager) forget(l *Login) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logins[l.ID] == l {
		delete(m.logins, l.ID)
	}
	key := ownerKey{l.Owner, l.Agent}
	if m.current[key] == l {
		delete(m.current, key)
	}
}

// Get returns p's login id of agent. Another principal's login is ErrNotFound, as one that never existed.
func (m *Manager) Get(p principal.Principal, agent, id string) (*Login, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logins[id]
	if l == nil || l.Owner != p.ID || l.Agent != agent {
		return nil, ErrNotFound
	}
	return l, nil
}

// Shutdown kills every running login and waits until they have ended (or ctx is done).
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	list := make([]*Login, 0, len(m.logins))
	for _, l := range m.logins {
		list = append(list, l)
	}
	m.mu.Unlock()
	for _, l := range list {
		l.Kill(ReasonShutdown)
	}
	for _, l := range list {
		select {
		case <-l.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// exitStatus is how the login ended; ok is false while it runs.
func (l *Login) exitStatus() (Exit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exit == nil {
		return Exit{}, false
	}
	return *l.exit, true
}

package sessions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/agentprobe"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/admit"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/sessions/internal/login"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/takeover"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/google/uuid"
)

// AgentInfo describes a configured agent to clients (never its command line or environment).
type AgentInfo struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default bool   `json:"default"`
	// The agent's own initialize answer when known (package agentprobe); nil = not known (yet).
	*agentprobe.AgentInit
	// Available is false when the agent cannot be started now (its command is not found); Reason says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// Registry holds every live session.
type Registry struct {
	// Static after construction.
	cfg          Config
	sessCfg      *core.SessionConfig // the part of cfg its sessions read (Host)
	followCfg    *follow.Config      // the part of cfg its followers read (follow.Host)
	durableCfg   *durable.Config     // the part of cfg its store links read (durable.Host)
	takeover     *takeover.Taker     // closes the stored logs left open (takeover.Host)
	agents       map[string]agents.Spec
	agentOrder   []string
	defaultAgent string

	admit  *admit.Policy     // what a session may run with: its directories, a client's MCP servers
	probes *agentprobe.Cache // what each agent answered to initialize
	logins *agentlogin.Vault // what principals supplied to log agents in (package login)
	login  *login.Logins     // agent login from clients (login.go)
	// beforeAttach is a test hook: a start or re-attach calls it (when set) once its agent is up or failed,
	// right before it takes the session's mu to make the agent the session's.
	beforeAttach func(*Session)
	// stopping ends when Shutdown begins: sessions still starting stop waiting for their agent. stopStarts
	// ends it.
	stopping   context.Context
	stopStarts context.CancelFunc

	incarnation string          // Static after construction; this process, in directory entries.
	startedAt   time.Time       // Static after construction.
	retired     durable.Retired // counters of stopped persisters (storestats.go)

	mu       sync.Mutex
	sessions map[string]*Session // Guarded by mu.
	detached map[string]struct{} // Guarded by mu; ids of detached sessions: they do not count against the limits.
	// followers are other nodes' sessions this node serves (mode c, package follow); they count against nothing.
	followers map[string]*Session // Guarded by mu.
	removed   tombstones          // Guarded by mu; directory revisions of removals, so a late read adds no follower.
	closing   bool                // Guarded by mu; set by Shutdown.
	// starting counts Creates in progress; Add only under mu while !closing, so Shutdown's Wait sees them all.
	starting sync.WaitGroup
}

// NewRegistry returns a registry serving the given agents.
func NewRegistry(cfg Config, specs []agents.Spec, defaultAgent string) (*Registry, error) {
	cfg = cfg.withDefaults()
	if !filepath.IsAbs(cfg.Workdir) {
		return nil, fmt.Errorf("workdir %q is not absolute", cfg.Workdir)
	}
	r := &Registry{cfg: cfg, agents: map[string]agents.Spec{}, sessions: map[string]*Session{}, detached: map[string]struct{}{}, followers: map[string]*Session{}}
	r.sessCfg, r.followCfg = r.cfg.forSessions(), r.cfg.followConfig()
	r.admit = &admit.Policy{Roots: cfg.WorkspaceRoots, Workdir: cfg.Workdir, AllowClientMCPStdio: cfg.AllowClientMCPStdio}
	r.stopping, r.stopStarts = context.WithCancel(context.Background())
	r.incarnation, r.startedAt = uuid.NewString(), time.Now().UTC()
	if cfg.Cluster != nil {
		// The incarnation the node beats with is the one its entries carry: a lost incarnation's sessions are
		// those whose entries name it (package takeover).
		r.incarnation = cfg.Cluster.Self().Incarnation
	}
	r.durableCfg = &durable.Config{
		Store: r.cfg.Store, NodeID: r.cfg.NodeID, Incarnation: r.incarnation, Clustered: r.cfg.Cluster != nil,
		StartTimeout: r.cfg.StartTimeout, Retired: &r.retired,
	}
	r.takeover = takeover.New(takeoverHost{r}, &takeover.Config{
		Store: r.cfg.Store, Cluster: r.cfg.Cluster, NodeID: r.cfg.NodeID, Incarnation: r.incarnation,
		Logger: r.cfg.Logger, OrphanSweepAfter: r.cfg.OrphanSweepAfter,
	})
	r.probes = agentprobe.NewCache(r.probe, cfg.ProbeFailureTTL, cfg.Logger)
	r.logins = agentlogin.NewVault()
	r.login = login.New(loginHost{r}, &login.Config{
		Vault: r.logins, Logger: cfg.Logger, Workdir: cfg.Workdir, AgentEnv: cfg.AgentEnv, Confiner: cfg.Confiner,
		Version: cfg.Version, StartTimeout: cfg.StartTimeout, StopGrace: cfg.StopGrace, AgentWriteTimeout: cfg.AgentWriteTimeout,
	})
	for _, s := range specs {
		if !agents.ValidName(s.Name) {
			return nil, fmt.Errorf("agent name %q: use letters, digits, '-', '_', '.'", s.Name)
		}
		if _, dup := r.agents[s.Name]; dup {
			return nil, fmt.Errorf("agent %q configured twice", s.Name)
		}
		r.agents[s.Name] = s
		r.agentOrder = append(r.agentOrder, s.Name)
	}
	if _, ok := r.agents[defaultAgent]; !ok {
		return nil, fmt.Errorf("default agent %q is not configured (have %v)", defaultAgent, r.agentOrder)
	}
	r.defaultAgent = defaultAgent
	return r, nil
}

// Agents lists the configured agents in configuration order, with the initialize answers known so far (it
// starts no probe; see ProbedAgents).
func (r *Registry) Agents() []AgentInfo {
	out := make([]AgentInfo, 0, len(r.agentOrder))
	for _, n := range r.agentOrder {
		spec := r.agents[n]
		info := AgentInfo{Name: n, Kind: spec.Kind, Default: n == r.defaultAgent, Available: true, AgentInit: r.probes.Known(spec)}
		// Looked up on each call: an agent installed after the gateway started becomes available.
		if err := agents.CheckCommand(spec); err != nil {
			info.Available, info.Reason = false, err.Error()
		}
		out = append(out, info)
	}
	return out
}

// StatusCounts counts live sessions by status (for metrics).
func (r *Registry) StatusCounts() map[string]int {
	out := map[string]int{}
	for _, s := range r.List() {
		out[string(s.Status())]++
	}
	return out
}

// DefaultAgent is the agent used when a client names none.
func (r *Registry) DefaultAgent() string { return r.defaultAgent }

// CreateOptions are a client's choices for a new session.
type CreateOptions struct {
	Agent string // "" = default agent
	Cwd   string // "" = Config.Workdir; else absolute
	// AdditionalDirs are more absolute directories for the agent (ACP additionalDirectories), confined like Cwd.
	AdditionalDirs   []string
	PermissionPolicy string // "" = ask
	// Owner is the principal creating the session (zero = nobody: the gateway's own code). Only the owner
	// and admins see it; Config.MaxSessionsPerUser bounds a user's sessions.
	Owner principal.Principal
	// MCPServers are the client's own, added to the agent's configured ones (package admit checks them).
	MCPServers []agents.MCPServer
	// Node is the node that should run the session (mode c); "" or this node = here. Another live node gets
	// the create routed to it; a node that is not live is ErrUnknownNode.
	Node string
	// follower: the session is a copy of another node's (package follow): its cwd is on that node's machine,
	// so it is not opened here.
	follower bool
	// restored: the session comes from a stored entry (recover.go); its cwd is opened only once a re-attach
	// has checked it again (recheck.go).
	restored bool
	// fork: the session is a fork of another (fork.go): its agent forks that session instead of opening a
	// new one, and its log starts with the source's transcript.
	fork *forkPoint
}

// Create starts a session: launches its agent, sends initialize and session/new (each bounded by
// StartTimeout), and returns it idle. The session is listed as "starting" meanwhile; on failure it is removed
// and the agent stopped.
func (r *Registry) Create(ctx context.Context, opts CreateOptions) (*Session, error) {
	if opts.Node != "" && opts.Node != r.cfg.NodeID {
		if r.cfg.Cluster == nil {
			return nil, fmt.Errorf("%w: %q (this gateway is node %q and runs alone)", sessionerr.ErrUnknownNode, opts.Node, r.cfg.NodeID)
		}
		return r.createRemote(ctx, opts)
	}
	if opts.Agent == "" {
		opts.Agent = r.defaultAgent
	}
	spec, ok := r.agents[opts.Agent]
	if !ok {
		return nil, fmt.Errorf("%w: %q", sessionerr.ErrUnknownAgent, opts.Agent)
	}
	if err := agents.CheckCommand(spec); err != nil {
		return nil, fmt.Errorf("%w: agent %q: %v", sessionerr.ErrAgentUnavailable, spec.Name, err)
	}
	if opts.Cwd == "" {
		opts.Cwd = r.cfg.Workdir
	}
	if !filepath.IsAbs(opts.Cwd) {
		return nil, fmt.Errorf("%w: cwd %q must be an absolute path", sessionerr.ErrBadRequest, opts.Cwd)
	}
	cwd, err := r.admit.Confine(opts.Cwd)
	if err != nil {
		return nil, err
	}
	opts.Cwd = cwd
	if opts.AdditionalDirs, err = r.admit.ConfineDirs(cwd, opts.AdditionalDirs); err != nil {
		return nil, err
	}
	if opts.PermissionPolicy == "" {
		opts.PermissionPolicy = PolicyAsk
	}
	if !pending.ValidPolicy(opts.PermissionPolicy) {
		return nil, fmt.Errorf("%w: permissionPolicy %q: want one of %v", sessionerr.ErrBadRequest, opts.PermissionPolicy, pending.Policies)
	}
	if err := r.admit.CheckClientMCP(spec, opts.MCPServers); err != nil {
		return nil, err
	}
	s := newSession(r, uuid.NewString(), spec, opts)
	c := core.ControlOf(s)
	if r.cfg.Store != nil {
		localOf(s).dur = r.newLink(s, 0) // before the session is shared
	}
	r.mu.Lock()
	switch {
	case r.closing:
		r.mu.Unlock()
		c.CloseRoot()
		return nil, sessionerr.ErrShuttingDown
	}
	if err := r.checkLimitsLocked(spec.Name, opts.Owner); err != nil {
		r.mu.Unlock()
		c.CloseRoot()
		return nil, err
	}
	r.sessions[s.ID] = s
	r.starting.Add(1)
	r.mu.Unlock()
	defer r.starting.Done()
	// A shutdown ends the start: the agent is stopped here rather than left running after the gateway exits.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.stopping, cancel)()
	run := localOf(s)
	if run.dur != nil {
		if err := run.dur.Create(ctx); err != nil {
			r.remove(s.ID)
			c.CloseRoot()
			return nil, err
		}
	}
	if opts.fork != nil {
		run.logHistory(opts.fork.history) // behind the store's write-behind, so a restart keeps the history
	}
	sctx, span := r.cfg.Tracer.StartCreateAgent(ctx, spec.Name, s.ID)
	err = run.start(sctx)
	span.End(err)
	if err != nil {
		r.remove(s.ID)
		c.CloseRoot()
		if run.dur != nil {
			run.dur.Remove()
		}
		if r.stopping.Err() != nil {
			return nil, sessionerr.ErrShuttingDown // cut short by the shutdown; the agent has been stopped
		}
		// The operator needs the agent's own words (a bad config, a missing login); clients get only the
		// error, since stderr may hold anything.
		var ae *sessionerr.AgentError
		if errors.As(err, &ae) {
			c.SessionLogger().Warn("agent failed to start", "err", err, "stderr", tail(ae.Stderr, 4096))
		}
		return nil, err
	}
	return s, nil
}

// checkLimitsLocked refuses one more attached session of the agent when a limit is reached. Detached
// sessions have no agent running and do not count.
func (r *Registry) checkLimitsLocked(agent string, owner principal.Principal) error {
	if r.cfg.MaxSessions > 0 && len(r.sessions)-len(r.detached) >= r.cfg.MaxSessions {
		return sessionerr.ErrTooManySessions
	}
	if r.cfg.MaxSessionsPerAgent > 0 && r.countAgentLocked(agent) >= r.cfg.MaxSessionsPerAgent {
		return fmt.Errorf("%w of agent %q", sessionerr.ErrTooManySessions, agent)
	}
	if r.overUserCapLocked(owner) {
		return fmt.Errorf("%w of this user", sessionerr.ErrTooManySessions)
	}
	return nil
}

// countAgentLocked counts the attached sessions of an agent.
func (r *Registry) countAgentLocked(name string) int {
	n := 0
	for id, s := range r.sessions {
		if _, detached := r.detached[id]; s.Agent == name && !detached {
			n++
		}
	}
	return n
}

// claimAttach counts a detached session as attached again, within the limits, and as a start in progress
// that Shutdown waits for (the caller calls r.starting.Done when its start ends).
func (r *Registry) claimAttach(s *Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return sessionerr.ErrShuttingDown
	}
	if _, ok := r.sessions[s.ID]; !ok {
		return sessionerr.ErrClosed
	}
	if err := r.checkLimitsLocked(s.Agent, s.Owner); err != nil { // still detached: s itself is not counted
		return err
	}
	delete(r.detached, s.ID)
	r.starting.Add(1)
	return nil
}

// markDetached records that a listed session is detached (on) or attached again.
func (r *Registry) markDetached(id string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sessions[id]; !ok {
		return
	}
	if on {
		r.detached[id] = struct{}{}
	} else {
		delete(r.detached, id)
	}
}

// Get returns a session, hydrating it first when it is a cold stored one (recover.go).
func (r *Registry) Get(id string) (*Session, error) {
	s, err := r.lookup(id)
	if err != nil {
		return nil, err
	}
	if err := core.ControlOf(s).Hydrate(); err != nil {
		return nil, goneIfClosed(err)
	}
	if s.Status() == store.StatusClosed {
		return nil, sessionerr.ErrNotFound
	}
	return s, nil
}

// goneIfClosed is a lookup's answer for a session that closed while it was loaded: 404, as for any closed
// session (its close removes it on every node; docs/rest.md), never 409 session_closed.
func goneIfClosed(err error) error {
	if errors.Is(err, sessionerr.ErrClosed) {
		return sessionerr.ErrNotFound
	}
	return err
}

// lookup returns a session as the registry holds it, cold or not: one of this node's, or in mode c a follower
// of another node's, registered from the directory the first time it is asked for.
func (r *Registry) lookup(id string) (*Session, error) {
	r.mu.Lock()
	s, ok := r.sessions[id]
	if !ok {
		s, ok = r.followers[id]
	}
	r.mu.Unlock()
	switch {
	case ok:
		return s, nil
	case r.cfg.Cluster == nil:
		return nil, sessionerr.ErrNotFound
	}
	return r.followerFromDirectory(id)
}

// List returns the live sessions, oldest first.
func (r *Registry) List() []*Session {
	r.mu.Lock()
	out := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		out = append(out, s)
	}
	r.mu.Unlock()
	sortSessions(out)
	return out
}

// sortSessions orders sessions oldest first (by id when created at once).
func sortSessions(ss []*Session) {
	slices.SortFunc(ss, func(a, b *Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func (r *Registry) remove(id string) {
	r.mu.Lock()
	delete(r.sessions, id)
	delete(r.detached, id)
	r.mu.Unlock()
}

// Shutdown refuses new sessions and probes, then ends every session in parallel and ends every probe: the
// running turn gets session/cancel and a bounded grace (StopGrace) and ends `cancelled`, pending permissions
// are resolved, the session reports its status, and the agent is stopped. Sessions end closed, or detached
// with Config.DetachOnShutdown (their logs are then closed, so streams end as they would on a close).
// Subscribers get all of it before their stream ends with ErrShutdown, so faces should close their sockets
// only after this returns. It returns when all agents are gone or ctx ends.
func (r *Registry) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.stopStarts()
	var wg sync.WaitGroup
	wg.Go(r.starting.Wait) // starts and re-attaches end (their agents stopped) once stopStarts has cut them short
	wg.Go(func() { _ = r.probes.Shutdown(ctx) })
	for _, s := range r.List() {
		wg.Go(func() {
			if r.cfg.DetachOnShutdown {
				run := localOf(s)
				run.detach(shutdownReason)
				if run.dur != nil {
					run.dur.Finish(ctx)
				}
			} else {
				s.Close(shutdownReason)
			}
		})
	}
	done := make(chan struct{})
	for _, s := range r.followerList() {
		wg.Go(follow.Of(s).Shutdown)
	}
	go func() {
		wg.Wait()
		if r.cfg.DetachOnShutdown {
			for _, s := range r.List() {
				s.Log().Close()
			}
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

const shutdownReason = "gateway shutting down"

// shuttingDown reports whether Shutdown has begun.
func (r *Registry) shuttingDown() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closing
}

func (r *Registry) now() time.Time { return time.Now() }

// ReapIdle closes sessions idle (no subscriber, no turn) for longer than Config.IdleTTL, checking every TTL/4,
// until ctx ends; with Config.DetachIdle it detaches them instead (their transcript stays), except failed
// ones, which no prompt can revive: they are closed, or with a Store kept for the retention janitor. A TTL of
// 0 returns at once.
func (r *Registry) ReapIdle(ctx context.Context) {
	ttl := r.cfg.IdleTTL
	if ttl <= 0 {
		return
	}
	tick := time.NewTicker(max(ttl/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			cutoff := r.now().Add(-ttl)
			r.pauseIdleFollowers(cutoff)
			for _, s := range r.List() {
				switch {
				case !core.ControlOf(s).IdleSince(cutoff):
				case r.cfg.DetachIdle && s.Status() != store.StatusFailed: // a failed session has nothing to re-attach
					localOf(s).detach("idle for " + ttl.String())
				case r.cfg.Store != nil && s.Status() == store.StatusFailed:
					// Stored: its transcript stays readable until --retention (the janitor) or DELETE removes it.
				default:
					s.Close("idle for " + ttl.String())
				}
			}
		}
	}
}

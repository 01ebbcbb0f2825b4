package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
)

// Probing: the faces report an agent's own `initialize` answer (capabilities, auth methods, info) before any
// session of it exists, so clients do not hide features the agent has. The registry asks each agent once, on
// first use, by starting its process, sending initialize and stopping it again, and keeps the answer until
// the agent's command line, environment or executable changes. Every session start refreshes it. A failed
// probe is remembered for Config.ProbeFailureTTL, so a broken agent is not started on every request.

// probeCache holds the last initialize answer of each agent and runs the probes. Probes run on goroutines
// of their own (a client that stops waiting does not abort one that others share), joined by Shutdown.
type probeCache struct {
	// Static after construction.
	reg    *Registry
	ctx    context.Context // cancelled by Shutdown: running probes give up
	cancel context.CancelFunc
	wg     sync.WaitGroup // running probes

	mu      sync.Mutex
	entries map[string]*probeEntry // Guarded by mu; by agent name.
	closed  bool                   // Guarded by mu; set by Shutdown: no probe starts after it.
}

// probeEntry is what is known about one agent. Guarded by probeCache.mu.
type probeEntry struct {
	fingerprint string        // of the spec the fields below describe
	init        *AgentInit    // the last answer; nil = none
	failedAt    time.Time     // the last probe failed at this time (zero = it did not)
	running     chan struct{} // non-nil while a probe runs; closed when its outcome is recorded
}

func newProbeCache(r *Registry) *probeCache {
	ctx, cancel := context.WithCancel(context.Background())
	return &probeCache{reg: r, ctx: ctx, cancel: cancel, entries: map[string]*probeEntry{}}
}

// AgentInit returns the agent's initialize answer, probing the agent first when none is known for its
// current configuration (or waiting for the probe already running). ok is false for an unknown agent, a
// probe that failed (now or within Config.ProbeFailureTTL), a shutdown, or ctx ending first.
func (r *Registry) AgentInit(ctx context.Context, name string) (AgentInit, bool) {
	spec, known := r.agents[name]
	if !known {
		return AgentInit{}, false
	}
	ai, wait := r.probes.lookup(spec, true)
	if wait == nil {
		return derefInit(ai)
	}
	select {
	case <-wait:
	case <-ctx.Done():
		return AgentInit{}, false
	}
	ai, _ = r.probes.lookup(spec, false)
	return derefInit(ai)
}

// ProbedAgents is Agents after probing (in parallel, as AgentInit) every agent whose answer is not known.
func (r *Registry) ProbedAgents(ctx context.Context) []AgentInfo {
	var wg sync.WaitGroup
	for _, name := range r.agentOrder {
		wg.Go(func() { r.AgentInit(ctx, name) })
	}
	wg.Wait()
	return r.Agents()
}

func derefInit(ai *AgentInit) (AgentInit, bool) {
	if ai == nil {
		return AgentInit{}, false
	}
	return *ai, true
}

// known returns the answer recorded for spec's current configuration, without probing.
func (p *probeCache) known(spec agents.Spec) *AgentInit {
	ai, _ := p.lookup(spec, false)
	return ai
}

// lookup returns the answer known for spec's current configuration. Otherwise, when start is set and no
// failure is remembered, it returns a channel closed once a probe (started here or already running) has
// ended.
func (p *probeCache) lookup(spec agents.Spec, start bool) (*AgentInit, <-chan struct{}) {
	fp := fingerprint(spec) // stats the executable: outside the lock
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[spec.Name]
	if e == nil || e.fingerprint != fp {
		// Nothing of an entry made for another configuration is kept; a probe still running for it records
		// nothing.
		e = &probeEntry{fingerprint: fp}
		p.entries[spec.Name] = e
	}
	switch {
	case e.init != nil:
		return e.init, nil
	case e.running != nil:
		if !start {
			return nil, nil
		}
		return nil, e.running
	case !start || p.closed:
		return nil, nil
	case !e.failedAt.IsZero() && time.Since(e.failedAt) < p.reg.cfg.ProbeFailureTTL:
		return nil, nil
	}
	e.running = make(chan struct{})
	p.wg.Add(1)
	go p.run(spec, fp, e.running)
	return nil, e.running
}

// record stores an initialize answer heard for spec (a probe's or a session start's).
func (p *probeCache) record(spec agents.Spec, ai AgentInit) {
	p.settle(spec.Name, fingerprint(spec), &ai, nil)
}

// settle records an outcome: a session start's answer (running nil), which describes the configuration of
// now, or a probe's, which is dropped when the configuration changed while it ran. It releases whoever waits
// for that probe.
func (p *probeCache) settle(name, fp string, ai *AgentInit, running chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[name]
	if running != nil {
		close(running)
		if e == nil || e.fingerprint != fp {
			return
		}
		if e.running == running {
			e.running = nil
		}
	} else if e == nil || e.fingerprint != fp {
		e = &probeEntry{fingerprint: fp}
		p.entries[name] = e
	}
	switch {
	case ai != nil:
		e.init, e.failedAt = ai, time.Time{}
	case e.init == nil:
		e.failedAt = time.Now()
	}
}

// run probes one agent and records the outcome; the agent is stopped after the waiters are released.
func (p *probeCache) run(spec agents.Spec, fp string, running chan struct{}) {
	defer p.wg.Done()
	log := p.reg.cfg.Logger.With("agent", spec.Name)
	ai, conn, err := p.reg.probe(p.ctx, spec)
	switch {
	case err != nil && p.ctx.Err() != nil:
		p.settle(spec.Name, fp, nil, running)
		log.Debug("agent probe ended by the gateway's shutdown")
	case err != nil:
		p.settle(spec.Name, fp, nil, running)
		var ae *AgentError
		stderr := ""
		if errors.As(err, &ae) {
			stderr = tail(ae.Stderr, 2048)
		}
		log.Warn("agent probe failed: /acp initialize answers with the gateway's defaults until it is retried",
			"err", err, "retryAfter", p.reg.cfg.ProbeFailureTTL, "stderr", stderr)
	default:
		p.settle(spec.Name, fp, &ai, running)
		log.Debug("agent probed", "agentInfo", string(ai.Info))
	}
	if conn != nil {
		conn.Stop()
	}
}

// shutdown stops new probes, ends running ones and waits for their agents to be stopped (or ctx).
func (p *probeCache) shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// probe starts the agent and sends it initialize, bounded by Config.StartTimeout. The caller stops the
// returned connection (nil when the agent did not start).
func (r *Registry) probe(ctx context.Context, spec agents.Spec) (AgentInit, *agents.Conn, error) {
	cfg := r.cfg
	conn, err := agents.Start(spec, agents.Options{
		Cwd: cfg.Workdir, Env: cfg.AgentEnv, Handler: probeHandler{}, StopGrace: cfg.StopGrace,
		Logger: cfg.Logger.With("agent", spec.Name, "probe", true), WriteTimeout: cfg.AgentWriteTimeout,
		Confiner: cfg.Confiner,
	})
	if err != nil {
		return AgentInit{}, nil, &AgentError{Op: "start agent", Err: err}
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	ai, err := initializeAgent(ictx, conn, cfg.Version)
	if err != nil {
		return AgentInit{}, conn, &AgentError{Op: "initialize", Err: callError(ictx, err, cfg.StartTimeout), Stderr: conn.Stderr()}
	}
	return ai, conn, nil
}

// probeHandler is the client side of a probe: no session exists, so the agent has nothing to send.
type probeHandler struct{}

func (probeHandler) SessionUpdate(json.RawMessage) {}

func (probeHandler) RequestPermission(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("no session: the gateway is only probing the agent")
}

// fingerprint identifies what an agent's initialize answer depends on: its command line, environment and
// HOME, and the executable the command resolves to (size and modification time), so an upgraded agent is
// asked again.
func fingerprint(spec agents.Spec) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00%s\x00%s\x00", spec.Kind, spec.Command, spec.Args, spec.Home, spec.AuthMethod)
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%q=%q\x00", k, spec.Env[k])
	}
	if spec.Command != "" {
		if path, err := exec.LookPath(spec.Command); err == nil {
			if fi, err := os.Stat(path); err == nil {
				fmt.Fprintf(h, "%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

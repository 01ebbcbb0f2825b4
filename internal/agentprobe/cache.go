// Package agentprobe asks agents their `initialize` answer before any session of them exists and keeps it
// until the agent's configuration changes, so faces report an agent's real capabilities. It holds no
// session state: the session core hands it the function that starts and asks an agent.
package agentprobe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
)

// The faces report an agent's own `initialize` answer (capabilities, auth methods, info) before any
// session of it exists, so clients do not hide features the agent has. The registry asks each agent once, on
// first use, by starting its process, sending initialize and stopping it again, and keeps the answer until
// the agent's command line, environment or executable changes. Every session start refreshes it. A failed
// probe is remembered for the cache's failure TTL, so a broken agent is not started on every request.

// Prober starts spec's agent and sends it initialize. The caller stops the returned connection (nil when
// the agent did not start); stderr is the end of the agent's stderr at a failure, for the log.
type Prober func(ctx context.Context, spec agents.Spec) (ai AgentInit, conn *agents.Conn, stderr string, err error)

// Cache holds the last initialize answer of each agent and runs the probes. Probes run on goroutines
// of their own (a client that stops waiting does not abort one that others share), joined by Shutdown.
type Cache struct {
	// Static after construction.
	probe      Prober
	failureTTL time.Duration // how long a failed probe is remembered
	logger     *slog.Logger
	ctx        context.Context // cancelled by Shutdown: running probes give up
	cancel     context.CancelFunc
	wg         sync.WaitGroup // running probes

	mu      sync.Mutex
	entries map[string]*entry // Guarded by mu; by agent name.
	closed  bool              // Guarded by mu; set by Shutdown: no probe starts after it.
}

// entry is what is known about one agent. Guarded by Cache.mu.
type entry struct {
	fingerprint string        // of the spec the fields below describe
	init        *AgentInit    // the last answer; nil = none
	failedAt    time.Time     // the last probe failed at this time (zero = it did not)
	running     chan struct{} // non-nil while a probe runs; closed when its outcome is recorded
}

// NewCache returns a cache that probes with probe and remembers a failure for failureTTL.
func NewCache(probe Prober, failureTTL time.Duration, logger *slog.Logger) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache{probe: probe, failureTTL: failureTTL, logger: logger, ctx: ctx, cancel: cancel, entries: map[string]*entry{}}
}

// Get returns the agent's initialize answer, probing the agent first when none is known for its current
// configuration (or waiting for the probe already running). ok is false for a probe that failed (now or
// within the failure TTL), a shutdown, or ctx ending first.
func (p *Cache) Get(ctx context.Context, spec agents.Spec) (AgentInit, bool) {
	ai, wait := p.lookup(spec, true)
	if wait == nil {
		return derefInit(ai)
	}
	select {
	case <-wait:
	case <-ctx.Done():
		return AgentInit{}, false
	}
	ai, _ = p.lookup(spec, false)
	return derefInit(ai)
}

func derefInit(ai *AgentInit) (AgentInit, bool) {
	if ai == nil {
		return AgentInit{}, false
	}
	return *ai, true
}

// Known returns the answer recorded for spec's current configuration, without probing.
func (p *Cache) Known(spec agents.Spec) *AgentInit {
	ai, _ := p.lookup(spec, false)
	return ai
}

// lookup returns the answer known for spec's current configuration. Otherwise, when start is set and no
// failure is remembered, it returns a channel closed once a probe (started here or already running) has
// ended.
func (p *Cache) lookup(spec agents.Spec, start bool) (*AgentInit, <-chan struct{}) {
	fp := fingerprint(spec) // stats the executable: outside the lock
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[spec.Name]
	if e == nil || e.fingerprint != fp {
		// Nothing of an entry made for another configuration is kept; a probe still running for it records
		// nothing.
		e = &entry{fingerprint: fp}
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
	case !e.failedAt.IsZero() && time.Since(e.failedAt) < p.failureTTL:
		return nil, nil
	}
	e.running = make(chan struct{})
	p.wg.Add(1)
	go p.run(spec, fp, e.running)
	return nil, e.running
}

// Record stores an initialize answer heard for spec (a probe's or a session start's).
func (p *Cache) Record(spec agents.Spec, ai AgentInit) {
	p.settle(spec.Name, fingerprint(spec), &ai, nil)
}

// settle records an outcome: a session start's answer (running nil), which describes the configuration of
// now, or a probe's, which is dropped when the configuration changed while it ran. It releases whoever waits
// for that probe.
func (p *Cache) settle(name, fp string, ai *AgentInit, running chan struct{}) {
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
		e = &entry{fingerprint: fp}
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
func (p *Cache) run(spec agents.Spec, fp string, running chan struct{}) {
	defer p.wg.Done()
	log := p.logger.With("agent", spec.Name)
	ai, conn, stderr, err := p.probe(p.ctx, spec)
	switch {
	case err != nil && p.ctx.Err() != nil:
		p.settle(spec.Name, fp, nil, running)
		log.Debug("agent probe ended by the gateway's shutdown")
	case err != nil:
		p.settle(spec.Name, fp, nil, running)
		log.Warn("agent probe failed: /acp initialize answers with the gateway's defaults until it is retried",
			"err", err, "retryAfter", p.failureTTL, "stderr", stderr)
	default:
		p.settle(spec.Name, fp, &ai, running)
		log.Debug("agent probed", "agentInfo", string(ai.Info))
	}
	if conn != nil {
		conn.Stop()
	}
}

// Shutdown stops new probes, ends running ones and waits for their agents to be stopped (or ctx).
func (p *Cache) Shutdown(ctx context.Context) error {
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

// Handler is the client side of a probe: no session exists, so the agent has nothing to send.
type Handler struct{}

func (Handler) SessionUpdate(json.RawMessage) {}

func (Handler) RequestPermission(context.Context, json.RawMessage) (json.RawMessage, error) {
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

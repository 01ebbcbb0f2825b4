package sessions

import (
	"context"
	"sync"

	"github.com/acp-gateway/gateway/internal/agentprobe"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
)

// The registry's side of probing (package agentprobe): what faces ask, and how an agent is started to be
// asked. A failed probe is remembered for Config.ProbeFailureTTL.

// AgentInit returns the agent's initialize answer, probing the agent first when none is known for its
// current configuration (or waiting for the probe already running). ok is false for an unknown agent, a
// probe that failed (now or within Config.ProbeFailureTTL), a shutdown, or ctx ending first.
func (r *Registry) AgentInit(ctx context.Context, name string) (agentprobe.AgentInit, bool) {
	spec, known := r.agents[name]
	if !known {
		return agentprobe.AgentInit{}, false
	}
	return r.probes.Get(ctx, spec)
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

// probe starts the agent and sends it initialize, bounded by Config.StartTimeout. The caller stops the
// returned connection (nil when the agent did not start); stderr is the end of a failed agent's stderr.
func (r *Registry) probe(ctx context.Context, spec agents.Spec) (_ agentprobe.AgentInit, _ *agents.Conn, stderr string, _ error) {
	cfg := r.cfg
	conn, err := agents.Start(spec, agents.Options{
		Cwd: cfg.Workdir, Env: cfg.AgentEnv, Handler: agentprobe.Handler{}, StopGrace: cfg.StopGrace,
		Logger: cfg.Logger.With("agent", spec.Name, "probe", true), WriteTimeout: cfg.AgentWriteTimeout,
		Confiner: cfg.Confiner,
	})
	if err != nil {
		return agentprobe.AgentInit{}, nil, "", &sessionerr.AgentError{Op: "start agent", Err: err}
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	ai, err := agentprobe.Initialize(ictx, conn, cfg.Version)
	if err != nil {
		ae := &sessionerr.AgentError{Op: "initialize", Err: agentlink.CallError(ictx, err, cfg.StartTimeout), Stderr: conn.Stderr()}
		return agentprobe.AgentInit{}, conn, tail(ae.Stderr, 2048), ae
	}
	return ai, conn, "", nil
}

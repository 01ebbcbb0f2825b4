package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	root "github.com/acp-gateway/gateway"
	"github.com/acp-gateway/gateway/internal/acpws"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	agentevents "github.com/acp-gateway/gateway/internal/agents/events"
	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/acp-gateway/gateway/internal/connlimit"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/httpapi"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/termlogin"
	"github.com/acp-gateway/gateway/internal/ws"
	"github.com/acp-gateway/gateway/web"
)

// version is the build's (buildinfo.go); -ldflags "-X main.version=…" still overrides it.
var version = "dev"

// run is the whole gateway: parse configuration, wire the registry and the faces, serve until ctx ends, then
// shut down gracefully (refuse new work, cancel turns, close sockets with 1001, stop every agent).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // --help printed the usage: a request, not an error
	}
	if err != nil {
		return configError{err}
	}
	if cfg.version {
		printVersion(stdout)
		return nil
	}
	logger, err := newLogger(cfg, stderr)
	if err != nil {
		return configError{err}
	}
	tracer, stopTraces, err := startTraces(ctx, getenv, logger, cfg.shutdownTimeout)
	if err != nil {
		return err
	}
	defer stopTraces() // last: the spans of the turns the shutdown ended are flushed too
	// Descendants of agents that leave their process group (setsid) are re-parented to the gateway, which
	// kills and reaps them when it stops the agent (internal/agents/strays.go).
	if err := becomeSubreaper(); err != nil {
		logger.Warn("cannot become a child subreaper; processes an agent starts in a session of their own may outlive it", "err", err)
	}
	confiner, err := cfg.confiner(logger)
	if err != nil {
		return err
	}
	demoDelay := cfg.demoDelay
	demoSpec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{Delay: demoDelay, Logger: logger.With("agent", "demo")}, in, out)
	}}
	specs, err := cfg.agentSpecs(demoSpec)
	if err != nil {
		return err
	}
	if err := cfg.isolateHomes(specs); err != nil {
		return err
	}
	cfg.adaptEventAgents(specs, logger, confiner)
	if cfg.insecureNoAuth && !cfg.authenticates() {
		logger.Warn("INSECURE: serving without authentication on a non-loopback address; anyone who can connect can make agents run commands", "addr", cfg.addr)
	}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}
	certs, err := newServedCert(cfg, logger)
	if err != nil {
		return err
	}
	if certs != nil {
		defer certs.watch()() // SIGHUP reloads the pair (and no longer stops the gateway)
	}
	// The port is taken before the store opens: in mode c the node advertises the address it listens on.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return listenError("addr", cfg.addr, err)
	}
	defer ln.Close() // a start that fails gives the port back; once served, the server has closed it
	// No ReadTimeout: it would cut WebSockets and event streams; bodies get api.BodyTimeout instead.
	front := &frontHandler{version: version}
	srv := &http.Server{
		Handler: front, ReadHeaderTimeout: cfg.headerTimeout, IdleTimeout: cfg.httpIdleTimeout,
		ConnContext: connContext, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// Near RLIMIT_NOFILE, idle keep-alives are closed before accept runs out of descriptors.
	limited := connlimit.Wrap(ln, connlimit.Limits{
		MaxUnauthenticated: cfg.maxUnauthConns, WriteTimeout: cfg.writeTimeout, MaxPerUser: cfg.maxConnsPerUser,
	})
	serveErr := make(chan error, 1)
	serving := false
	serve := func() {
		if !serving {
			serving = true
			go func() { serveErr <- serveHTTP(srv, limited, certs) }()
		}
	}
	var (
		reg     *sessions.Registry
		regLive atomic.Pointer[sessions.Registry]
		sb      storeBacking
	)
	switch {
	case cfg.dataDir != "":
		ds, err := cfg.openDataDir(ctx, logger)
		if err != nil {
			return err
		}
		defer ds.close() // after the registry's shutdown flushed every session
		sb = storeBacking{store: ds.store, nodeID: ds.nodeID, up: ds.up}
	case cfg.natsURL != "":
		// The registry needs the cluster in its Config and the cluster's beats need the registry's store
		// state: until the registry exists a beat reports an idle store.
		state := func() store.StoreState {
			if r := regLive.Load(); r != nil {
				return r.StoreState()
			}
			return store.StoreState{State: "ok"}
		}
		// Alive but not ready while the cluster forms: serve /healthz now, the API once joined.
		serve()
		defer srv.Close() // a start that fails or is stopped while waiting ends its health checks too
		logger.Info("waiting for the store", "addr", ln.Addr().String(), "nats", cfg.natsURL)
		cs, err := cfg.waitJoin(ctx, logger, cfg.advertise(ln.Addr()), names, state)
		if err != nil && ctx.Err() != nil {
			logger.Info("stopped before the NATS cluster was ready", "err", err.Error())
			return nil
		}
		if err != nil {
			return err
		}
		defer cs.leave() // after the registry's shutdown: then the membership, then the connection
		// Up while connected and while the nodes bucket takes this node's beats: a connection to a server
		// whose cluster lost its quorum is not a store that can make progress.
		up := func() bool { return cs.conn.IsConnected() && cs.cluster.Healthy() }
		sb = storeBacking{store: cs.store, nodeID: cfg.nodeID, cluster: cs.cluster, up: up, tickets: cs.tickets}
	}
	m := metrics.New(func() map[string]int { return reg.StatusCounts() })
	m.SetBuildInfo(build.Version, build.Commit, build.Date, build.GoVersion)
	reg, err = sessions.NewRegistry(sb.configure(sessions.Config{
		Workdir:             cfg.workdir,
		Log:                 eventlog.LogLimits{MaxFrames: cfg.logMaxFrames, MaxBytes: cfg.logMaxBytes},
		MaxSessions:         cfg.maxSessions,
		MaxClients:          cfg.maxClients,
		IdleTTL:             cfg.idleTTL,
		MaxFieldBytes:       cfg.maxFieldBytes,
		Redact:              cfg.redact,
		StartTimeout:        cfg.startTimeout,
		CancelGrace:         cfg.cancelGrace,
		AgentWriteTimeout:   cfg.agentWriteTimeout,
		PermissionTimeout:   cfg.permissionTimeout,
		QuietNotice:         cfg.agentQuietNotice,
		AgentEnv:            cfg.agentEnv,
		Confiner:            confiner,
		Logger:              logger,
		Version:             version,
		Metrics:             m,
		Tracer:              tracer,
		WorkspaceRoots:      cfg.workspaceRoots,
		MaxSessionsPerAgent: cfg.maxPerAgent,
		MaxSessionsPerUser:  cfg.maxPerUser,
		MaxPromptBytes:      cfg.maxPromptBytes,
		MaxTurnTextBytes:    cfg.turnTextMaxBytes,
		AllowClientMCPStdio: cfg.allowClientMCP, MaxTerminalsPerSession: cfg.maxTerminals,
	}), specs, cfg.defaultAgent)
	if err != nil {
		return err
	}
	regLive.Store(reg)
	// The cluster's part of the registry (commands served, the directory watched) runs until the registry
	// has shut down, so commands routed here during the drain still reach their sessions.
	clusterCtx, stopCluster := context.WithCancel(context.Background())
	defer stopCluster()
	if sb.store != nil {
		m.WatchStore(func() metrics.StoreStats {
			st := reg.StoreStats()
			out := metrics.StoreStats{
				LagFrames: st.LagFrames, LagBytes: st.LagBytes, LagSeconds: st.OldestUnacked.Seconds(),
				PublishErrors: st.Errors, Frames: st.Frames, Gaps: st.Gaps, Up: sb.up(),
			}
			if fs, ok := sb.store.(interface{ FeedStalls() uint64 }); ok {
				out.FeedStalls = fs.FeedStalls()
			}
			return out
		})
		n, err := reg.Recover(ctx)
		if err != nil {
			return err
		}
		logger.Info("stored sessions restored", "sessions", n)
		if err := reg.RunCluster(clusterCtx); err != nil {
			return fmt.Errorf("--nats-url: the cluster did not start: %v", err)
		}
	}
	// One budget for every socket reader: many sockets sending large frames hold at most this much.
	inb := inbound.New(cfg.maxInboundBytes, 0).WithFrameTimeout(cfg.bodyTimeout)
	wsh := ws.NewHandler(reg, ws.Options{
		QueueFrames: cfg.wsQueueFrames, QueueBytes: cfg.wsQueueBytes, ReadLimit: cfg.wsMaxFrame, Inbound: inb,
		PingInterval: cfg.wsPingInterval, WriteTimeout: cfg.writeTimeout, Logger: logger, Metrics: m,
	})
	acph := acpws.NewHandler(reg, acpws.Options{
		QueueFrames: cfg.wsQueueFrames, QueueBytes: cfg.wsQueueBytes, ReadLimit: cfg.wsMaxFrame, Inbound: inb,
		PingInterval: cfg.wsPingInterval, WriteTimeout: cfg.writeTimeout, MaxConns: cfg.maxACPConns,
		MaxConnsPerUser: cfg.maxACPConnsPerUser,
		IdleTimeout:     cfg.acpIdleTimeout,
		Subprotocols:    []string{ws.Subprotocol}, Logger: logger, Metrics: m, Version: version,
	})
	ident, err := newIdentity(cfg, logger, sb.tickets)
	if err != nil {
		return err
	}
	defer ident.stop()
	auth := ident.auth
	logins := termlogin.New(termlogin.Config{
		Specs: specs, Env: cfg.agentEnv, Workdir: cfg.workdir, Confiner: confiner, Logger: logger,
		AuthMethods: func(ctx context.Context, agent string) (json.RawMessage, bool) {
			ai, ok := reg.AgentInit(ctx, agent)
			return ai.AuthMethods, ok
		},
	})
	api := &httpapi.Server{
		Logins:   logins,
		Registry: reg, WS: wsh, ACP: acph, Logger: logger, OpenAPI: root.OpenAPI, Web: web.FS(),
		MaxBodyBytes: cfg.maxBodyBytes, Version: version, Commit: build.Commit, BuildDate: build.Date,
		SSEHeartbeat: cfg.sseHeartbeat, StreamWriteTimeout: cfg.writeTimeout, StreamQueueFrames: cfg.wsQueueFrames, StreamQueueBytes: cfg.wsQueueBytes, Auth: auth, Metrics: m, Tracer: tracer, AllowedOrigins: splitList(cfg.allowedOrigins),
		AllowedHosts: splitList(cfg.allowedHosts), ListenHost: cfg.listenHost(), BodyTimeout: cfg.bodyTimeout,
	}
	if sb.cluster != nil {
		api.StoreConnected = sb.up // a node cut off from NATS is not ready: a load balancer sends clients elsewhere
	}
	if cfg.debugAddr != "" {
		stopDebug, err := serveDebug(cfg.debugAddr, logger)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	front.ready(api.Handler())
	for _, s := range specs {
		if err := agents.CheckCommand(s); err != nil {
			logger.Warn("agent unavailable: its command was not found; sessions with it are refused until it is installed",
				"agent", s.Name, "command", s.Command)
		}
	}
	urls := listenURLs(cfg.scheme(), ln.Addr(), cfg.hostServed)
	logger.Info("gateway listening", "addr", ln.Addr().String(), "url", strings.Join(urls, " "),
		"agents", strings.Join(names, ","), "default", cfg.defaultAgent, "workdir", cfg.workdir, "procs", runtime.GOMAXPROCS(0),
		"version", build.Version, "commit", build.Commit, "date", build.Date)

	reapCtx, stopReap := context.WithCancel(context.Background())
	defer stopReap()
	go reg.ReapIdle(reapCtx)
	if sb.store != nil && cfg.retention > 0 {
		go reg.ExpireStored(reapCtx, cfg.retention)
	}

	serve()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	// Sessions end first, with every face still attached: running turns end `cancelled` (after
	// session/cancel and a bounded grace), pending permissions are resolved and each session reports its
	// status, so clients see why before their sockets close with 1001 (session sockets as their session
	// ends, /acp and event streams right after).
	api.SetDraining()
	var errs [4]error
	errs[0] = errors.Join(reg.Shutdown(sctx), logins.Shutdown(sctx))
	api.EndStreams()
	wsh.Drain()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); errs[1] = srv.Shutdown(sctx) }()
	go func() { defer wg.Done(); errs[2] = wsh.Shutdown(sctx) }()
	go func() { defer wg.Done(); errs[3] = acph.Shutdown(sctx) }()
	wg.Wait()
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return errors.Join(errs[:]...)
}

// adaptEventAgents serves each native-dialect agent through the in-process ACP adapter, which starts the
// configured process per session (HOME isolation already applied to Spec.Env).
func (c *config) adaptEventAgents(specs []agents.Spec, logger *slog.Logger, confiner *confine.Confiner) {
	for i := range specs {
		if specs[i].Kind != agents.KindEvents {
			continue
		}
		spec := specs[i]
		env := append([]string(nil), c.agentEnv...)
		for k, v := range spec.Env {
			env = append(env, k+"="+v)
		}
		evcfg := agentevents.Config{
			Command: spec.Command, Args: spec.Args, Env: env, Name: spec.Name,
			Logger: logger.With("agent", spec.Name), MaxFieldBytes: c.maxFieldBytes, KeepSecrets: !c.redact,
			WriteTimeout: c.agentWriteTimeout, Confiner: confiner, Confine: spec.Confine,
		}
		specs[i].Builtin = func(ctx context.Context, in io.Reader, out io.Writer) error {
			evcfg := evcfg
			evcfg.Stderr = agents.BuiltinStderr(ctx) // the quiet-turn notice shows the processes' stderr
			return agentevents.Serve(ctx, evcfg, in, out)
		}
	}
}

func newLogger(cfg *config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %v", cfg.logLevel, err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", cfg.logFormat)
}

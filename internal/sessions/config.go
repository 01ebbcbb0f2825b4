package sessions

import (
	"log/slog"
	"time"

	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/telemetry"
)

// Config holds the registry's settings. cmd/gateway fills it from flags; zero values mean the defaults noted.
type Config struct {
	Workdir           string             // default cwd of new sessions; required, absolute
	Log               eventlog.LogLimits // per-session event log bounds; zero = unbounded
	MaxSessions       int                // 0 = unlimited
	MaxClients        int                // subscribers (sockets, event streams) per session; 0 = unlimited
	IdleTTL           time.Duration      // sessions with no subscriber and no turn are closed after this; 0 = never
	MaxFieldBytes     int                // tool-call content/rawInput/rawOutput bound; 0 = unbounded
	Redact            bool               // redact secrets in tool-call fields
	StartTimeout      time.Duration      // initialize and session/new each; 0 = 60 s
	CallTimeout       time.Duration      // set_mode, set_config_option, …; 0 = 30 s
	CancelGrace       time.Duration      // wait for the agent's answer after session/cancel; 0 = 10 s
	PermissionTimeout time.Duration      // deadline of a pending permission request; 0 = 5 min
	StopGrace         time.Duration      // per shutdown step of an agent process; 0 = 2 s
	AgentWriteTimeout time.Duration      // each write to an agent's stdin; 0 = agents' default (30 s)
	AgentEnv          []string           // environment given to external agents (already allowlisted)
	// Confiner confines external agents, their terminals and what they start (package confine); nil = none.
	Confiner *confine.Confiner
	Logger   *slog.Logger // nil = slog.Default()
	Version  string       // reported to agents as clientInfo.version
	Metrics  *metrics.Metrics
	// Tracer emits the traces of session starts, turns and tool calls; nil is tracing off.
	Tracer *telemetry.Tracer
	// WorkspaceRoots confine session cwds: a cwd must resolve (symlinks followed) inside one of them.
	// Empty = Workdir only.
	WorkspaceRoots []string
	// MaxSessionsPerAgent bounds the sessions of any one agent; 0 = unlimited.
	MaxSessionsPerAgent int
	// MaxSessionsPerUser bounds the sessions of any one principal of role user (admins are bound only by
	// MaxSessions); 0 = unlimited.
	MaxSessionsPerUser int
	// MaxPromptBytes bounds a prompt's encoded content blocks on every face (REST 413, ACP -32602);
	// 0 = unlimited.
	MaxPromptBytes int64
	// MaxTurnTextBytes bounds the agent text a turn collects for its result (REST `prompt?wait=true`): past it
	// the text is cut and the result says truncated. The log has its own bounds. 0 = 1 MiB.
	MaxTurnTextBytes int
	// ProbeFailureTTL is how long a failed probe of an agent's initialize (probe.go) is remembered before the
	// agent is probed again; 0 = 30 s, and never less than StartTimeout (a probe that hangs for the whole start
	// timeout must not be followed by another at once).
	ProbeFailureTTL time.Duration
	// DetachIdle makes the idle reaper detach sessions (stop the agent, keep the transcript; a prompt
	// re-attaches) instead of closing them. Store modes set it (docs/cluster.md §4).
	DetachIdle bool
	// DetachOnShutdown makes Shutdown end sessions detached instead of closed. Store modes set it.
	DetachOnShutdown bool
	// AllowClientMCPStdio lets clients add stdio MCP servers to their sessions: a client-chosen command run
	// on the gateway's host. Off by default (package admit).
	AllowClientMCPStdio bool
	// Store makes sessions outlive the process (docs/cluster.md §4): nil is memory mode, where nothing
	// below the registry's lifecycle calls changes. Store modes also set DetachIdle and DetachOnShutdown.
	Store store.Store
	// NodeID names this gateway in directory entries (DirEntry.Owner); store modes only.
	NodeID string
	// Cluster is set in mode c (--nats-url, docs/cluster.md §5): sessions of other nodes are served from
	// follower caches and their commands routed to the owner. nil = this node is alone (memory or mode b).
	Cluster store.Cluster
	// OrphanSweepAfter is how long RunCluster watches nodes before it sweeps the directory once for sessions
	// left open by nodes that were already gone when this one started (no loss event names them); 0 =
	// NodeTTL, after which every live node has beaten.
	OrphanSweepAfter time.Duration
	// MaxTerminalsPerSession bounds the terminals an agent holds (created, not released) in one session;
	// 0 = 8.
	MaxTerminalsPerSession int
	// MaxFSRequests bounds the agent's fs/* requests in flight in one session (served by the gateway or a
	// delegate); more are refused at once. 0 = 16.
	MaxFSRequests int
	// QuietNotice: a turn during which the agent sends nothing for this long gets a logged
	// `_gateway/agent_quiet` notice with its recent stderr, again at doubling intervals (quiet.go); 0 = none.
	QuietNotice time.Duration
}

// defaultTurnTextBytes is MaxTurnTextBytes when unset: far more than a reply anyone reads whole, far less than
// an agent can stream into a turn.
const defaultTurnTextBytes = 1 << 20

// forSessions is the part of c the session core reads (Host.sessionConfig); c has its defaults.
func (c *Config) forSessions() *core.SessionConfig {
	return &core.SessionConfig{
		Log: c.Log, Logger: c.Logger, Metrics: c.Metrics, Tracer: c.Tracer,
		MaxClients: c.MaxClients, MaxFieldBytes: c.MaxFieldBytes, Redact: c.Redact,
		MaxPromptBytes: c.MaxPromptBytes, MaxTurnTextBytes: c.MaxTurnTextBytes,
		CallTimeout: c.CallTimeout, CancelGrace: c.CancelGrace, PermissionTimeout: c.PermissionTimeout,
		StopGrace: c.StopGrace, QuietNotice: c.QuietNotice,
		MaxFSRequests: c.MaxFSRequests, MaxTerminalsPerSession: c.MaxTerminalsPerSession,
		AgentEnv: c.AgentEnv, Confiner: c.Confiner,
	}
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.StartTimeout, 60*time.Second)
	def(&c.CallTimeout, 30*time.Second)
	def(&c.CancelGrace, 10*time.Second)
	def(&c.PermissionTimeout, 5*time.Minute)
	def(&c.StopGrace, 2*time.Second)
	def(&c.ProbeFailureTTL, 30*time.Second)
	def(&c.OrphanSweepAfter, store.NodeTTL)
	c.ProbeFailureTTL = max(c.ProbeFailureTTL, c.StartTimeout)
	if c.MaxTurnTextBytes <= 0 {
		c.MaxTurnTextBytes = defaultTurnTextBytes
	}
	if c.MaxTerminalsPerSession <= 0 {
		c.MaxTerminalsPerSession = 8
	}
	if c.MaxFSRequests <= 0 {
		c.MaxFSRequests = 16
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	return c
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
)

// config is everything the gateway reads from flags and the environment. Nothing else reads either.
type config struct {
	addr              string
	agentsFile        string
	agentFlags        []string
	defaultAgent      string
	workdir           string
	demoDelay         time.Duration
	logFormat         string
	logLevel          string
	logMaxFrames      int
	logMaxBytes       int64
	turnTextMaxBytes  int
	maxSessions       int
	maxBodyBytes      int64
	maxFieldBytes     int
	redact            bool
	startTimeout      time.Duration
	cancelGrace       time.Duration
	agentWriteTimeout time.Duration
	permissionTimeout time.Duration
	agentQuietNotice  time.Duration
	wsQueueFrames     int
	wsQueueBytes      int64
	wsMaxFrame        int64
	maxInboundBytes   int64
	maxClients        int
	idleTTL           time.Duration
	allowedOrigins    string
	allowedHosts      string
	shutdownTimeout   time.Duration
	version           bool
	agentEnv          []string
	token             string
	tokenFile         string
	insecureNoAuth    bool
	tlsCert, tlsKey   string // PEM files; both empty = plain HTTP
	workspaceRoots    []string
	debugAddr         string
	rateLimit         float64
	maxPromptBytes    int64
	maxPerAgent       int
	homeRoot          string
	sseHeartbeat      time.Duration
	wsPingInterval    time.Duration
	headerTimeout     time.Duration
	bodyTimeout       time.Duration
	httpIdleTimeout   time.Duration
	maxUnauthConns    int
	writeTimeout      time.Duration
	maxACPConns       int
	acpIdleTimeout    time.Duration
	usersFile         string
	oidcIssuer        string
	oidcAudience      string
	oidcIDClaim       string
	oidcNameClaim     string
	oidcRoleClaim     string
	trustedUserHeader string
	trustedProxies    string
	maxPerUser        int
	allowClientMCP    bool
	maxTerminals      int
	dataDir           string
	retention         time.Duration
	storeMaxLag       int64
	storeInflight     int
	natsPrefix        string
	natsURL           string
	natsCreds         string
	natsTLSCA         string
	natsTLSCert       string
	natsTLSKey        string
	natsReplicas      int
	nodeID            string
	advertiseURL      string
	confine           string

	// Per-user shares of the connection caps: one user cannot take every descriptor or /acp slot.
	maxConnsPerUser    int
	maxACPConnsPerUser int
}

// envAllowlist is the environment external agents get from the gateway's own (plus their configured env).
var envAllowlist = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"TERM", "TMPDIR", "TZ", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseConfig reads flags; every flag can also be set by GATEWAY_<NAME> (dashes as underscores), and a flag
// on the command line wins over the environment.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, and the usage printed only when asked for
	fs.Usage = func() {}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.agentsFile, "agents", "", `agents file in the shape of Zed's agent_servers setting: {"agent_servers": {"name": {"command", "args", "env"}}}`)
	fs.Var((*stringList)(&c.agentFlags), "agent", "an agent as 'name=command arg ...' (repeatable)")
	fs.StringVar(&c.defaultAgent, "default-agent", "demo", "agent used when a client names none")
	fs.StringVar(&c.workdir, "workdir", "", "default cwd of new sessions (default: the gateway's working directory)")
	fs.DurationVar(&c.demoDelay, "demo-delay", 300*time.Millisecond, "pause between the built-in demo agent's steps (0 = none)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.IntVar(&c.logMaxFrames, "log-max-frames", 10000, "frames kept per session event log (oldest trimmed first)")
	fs.Int64Var(&c.logMaxBytes, "log-max-bytes", 64<<20, "bytes kept per session event log")
	fs.IntVar(&c.turnTextMaxBytes, "turn-text-max-bytes", 1<<20, "agent text of a turn kept for prompt?wait=true; past it the result is cut and says truncated")
	fs.IntVar(&c.maxSessions, "max-sessions", 64, "most sessions at once (0 = unlimited)")
	fs.Int64Var(&c.maxBodyBytes, "max-body-bytes", 4<<20, "largest REST request body")
	fs.IntVar(&c.maxFieldBytes, "max-field-bytes", 64<<10, "bound on a tool call's content, rawInput and rawOutput sent to clients (0 = none)")
	fs.BoolVar(&c.redact, "redact", true, "redact secrets in tool-call fields sent to clients")
	fs.DurationVar(&c.startTimeout, "start-timeout", 60*time.Second, "deadline for an agent's initialize and session/new")
	fs.DurationVar(&c.cancelGrace, "cancel-grace", 10*time.Second, "how long to wait for the agent's answer after session/cancel before killing it")
	fs.DurationVar(&c.agentWriteTimeout, "agent-write-timeout", 30*time.Second, "deadline of each write to an agent's stdin; an agent that stops reading is killed and its session fails")
	fs.DurationVar(&c.agentQuietNotice, "agent-quiet-notice", 15*time.Second, "when an agent sends nothing for this long during a turn, log its recent stderr and send clients a _gateway/agent_quiet notice; again at doubling intervals while it stays quiet (0 = never)")
	fs.DurationVar(&c.permissionTimeout, "permission-timeout", 5*time.Minute, "deadline of a pending permission request or elicitation (then denied or declined)")
	fs.IntVar(&c.wsQueueFrames, "ws-queue-frames", 4096, "frames a streaming client (WebSocket, /acp, SSE) may lag behind before it is evicted (4001)")
	fs.Int64Var(&c.wsQueueBytes, "ws-queue-bytes", 16<<20, "bytes a streaming client (WebSocket, /acp, SSE) may lag behind before it is evicted (4001)")
	fs.Int64Var(&c.wsMaxFrame, "ws-max-frame", 16<<20, "largest WebSocket frame accepted from a client (1009 past it)")
	fs.Int64Var(&c.maxInboundBytes, "max-inbound-bytes", 64<<20, "bytes of client WebSocket frames all sockets together hold while reading them (1013 past it); at least --ws-max-frame")
	fs.IntVar(&c.maxClients, "max-clients", 64, "most clients (WebSockets, event streams) per session; 503 past it")
	fs.DurationVar(&c.wsPingInterval, "ws-ping-interval", 25*time.Second, "how often idle WebSockets (session sockets and /acp) are pinged; a client that does not answer within the interval is closed")
	fs.DurationVar(&c.writeTimeout, "write-timeout", 10*time.Second, "how long one frame's write to a streaming client (WebSocket, /acp, SSE) may take; a client that stops reading is dropped after it")
	fs.IntVar(&c.maxACPConns, "max-acp-conns", 256, "most /acp connections (WebSockets and Streamable HTTP) open at once; 503 past it")
	fs.IntVar(&c.maxACPConnsPerUser, "max-acp-conns-per-user", 32, "most /acp connections one principal of role user holds at once (admins: only --max-acp-conns); 429 too_many_user_connections past it (0 = unlimited)")
	fs.DurationVar(&c.acpIdleTimeout, "acp-idle-timeout", 60*time.Second, "how long a Streamable HTTP /acp connection may have no open stream and no request before it is ended (its sessions go on)")
	fs.DurationVar(&c.sseHeartbeat, "sse-heartbeat", 15*time.Second, "interval of the comment that keeps idle SSE streams alive through proxies")
	fs.DurationVar(&c.idleTTL, "idle-ttl", 30*time.Minute, "close sessions with no client and no turn after this long (0 = never; with --data-dir or --nats-url they are detached instead, and with --nats-url a copy of another node's session stops following its log until it is used again)")
	fs.StringVar(&c.allowedOrigins, "allowed-origins", "", "comma-separated Origin host patterns (* wildcards) browsers may call from besides same-origin (e.g. localhost:5173)")
	fs.StringVar(&c.allowedHosts, "allowed-hosts", "", "comma-separated Host patterns served besides loopback names and the --addr host (e.g. gateway.lan, *.example.com:8443); without a token nothing else is served, with one any Host is unless this is set")
	fs.DurationVar(&c.headerTimeout, "header-timeout", 10*time.Second, "how long a client may take to send a request's headers")
	fs.DurationVar(&c.bodyTimeout, "body-timeout", 30*time.Second, "how long a client may take to send a request body (408 past it), or a WebSocket frame once begun (the socket is closed past it); 0 = unbounded")
	fs.DurationVar(&c.httpIdleTimeout, "http-idle-timeout", 2*time.Minute, "how long an idle keep-alive connection stays open")
	fs.IntVar(&c.maxConnsPerUser, "max-conns-per-user", 64, "most open HTTP connections (keep-alives, WebSockets, event streams) one principal of role user holds (admins are not bound); past it their longest idle keep-alive is closed, or the request is refused 429 too_many_user_connections when none is idle (0 = unlimited)")
	fs.IntVar(&c.maxUnauthConns, "max-unauthenticated-conns", 256, "most open connections that have not yet made an authenticated request; a new one past the cap closes the oldest (0 = unlimited)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a graceful shutdown may take")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	fs.StringVar(&c.token, "token", "", "bearer token required on the API (prefer GATEWAY_TOKEN or --token-file: flags show in ps)")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token")
	fs.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "allow a non-loopback --addr without a token (anyone who can connect can run agents)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "serve HTTPS (HTTP/2 and HTTP/1.1) with this PEM certificate chain (with --tls-key); the pair is reloaded on SIGHUP")
	fs.StringVar(&c.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fs.Var((*stringList)(&c.workspaceRoots), "workspace-root", "directory session cwds must lie under, symlinks resolved (repeatable; default: --workdir)")
	fs.StringVar(&c.debugAddr, "debug-addr", "", "loopback address for pprof (e.g. 127.0.0.1:6060); off when empty")
	fs.Float64Var(&c.rateLimit, "rate-limit", 50, "requests per second per principal, bursts of twice that (0 = unlimited; applies with authentication)")
	fs.StringVar(&c.usersFile, "users", "", `users file: {"users": [{"name", "role": "admin"|"user", "tokenSha256"}]} (gateway hash-token prints a token's hash); reloaded on SIGHUP`)
	fs.StringVar(&c.oidcIssuer, "oidc-issuer", "", "OIDC issuer URL whose JWTs are accepted as bearer tokens (with --oidc-audience)")
	fs.StringVar(&c.oidcAudience, "oidc-audience", "", "audience (aud) an OIDC token must carry")
	fs.StringVar(&c.oidcIDClaim, "oidc-id-claim", "sub", "OIDC claim holding the principal's id")
	fs.StringVar(&c.oidcNameClaim, "oidc-name-claim", "name", "OIDC claim holding the principal's display name")
	fs.StringVar(&c.oidcRoleClaim, "oidc-role-claim", "role", `OIDC claim holding the role: "admin" (or an array holding it) is an admin, anything else a user`)
	fs.StringVar(&c.trustedUserHeader, "trusted-user-header", "", "header naming the user, set by an authenticating proxy (e.g. X-Forwarded-User); trusted only from --trusted-proxies, and only for names a users file could hold (no ':', not admin or anonymous)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs (or addresses) of the reverse proxies in front of the gateway: their X-Forwarded-For names the client (failed attempts are limited per client), and they may set --trusted-user-header")
	fs.IntVar(&c.maxPerUser, "max-sessions-per-user", 16, "most sessions one principal of role user has at once; admins are bound only by --max-sessions (0 = unlimited)")
	fs.Int64Var(&c.maxPromptBytes, "max-prompt-bytes", 1<<20, "largest prompt (its content blocks) accepted on every face: REST 413 prompt_too_large, /acp -32602 (0 = no limit beyond --max-body-bytes and --ws-max-frame)")
	fs.IntVar(&c.maxPerAgent, "max-sessions-per-agent", 0, "most sessions of one agent at once (0 = unlimited)")
	fs.BoolVar(&c.allowClientMCP, "allow-client-mcp-stdio", false, "let clients add stdio MCP servers to their sessions (a client-chosen command run on this host); http and sse ones need no flag")
	fs.IntVar(&c.maxTerminals, "max-terminals-per-session", 8, "most terminals an agent holds at once in one session (terminal/create past it is refused)")
	fs.StringVar(&c.dataDir, "data-dir", "", "keep sessions across restarts: an embedded NATS JetStream store in this directory (created 0700); restarted, the gateway lists them detached and a prompt re-attaches them")
	fs.DurationVar(&c.retention, "retention", 720*time.Hour, "with --data-dir or --nats-url: remove detached and failed sessions not updated for this long (0 = keep until DELETE)")
	fs.Int64Var(&c.storeMaxLag, "store-max-lag", 16<<20, "with --data-dir or --nats-url: bytes of frames not yet stored a session may hold; past it frames are trimmed unstored (a gap in the stored log)")
	fs.IntVar(&c.storeInflight, "store-inflight", 256, "with --data-dir: publishes to the store in flight per session (with --nats-url each publish is fenced: one atomic batch in flight)")
	fs.StringVar(&c.natsPrefix, "nats-prefix", "acpgw", "with --data-dir or --nats-url: prefix of the store's streams, buckets and subjects ([a-z0-9-]{1,32})")
	fs.StringVar(&c.natsURL, "nats-url", "", "run as one node of a cluster: comma-separated URLs of an external NATS JetStream cluster the nodes share (not with --data-dir)")
	fs.StringVar(&c.natsCreds, "nats-creds", "", "with --nats-url: NATS credentials file (JWT and nkey seed)")
	fs.StringVar(&c.natsTLSCA, "nats-tls-ca", "", "with --nats-url: CA bundle for the NATS servers' certificates (default: the system roots)")
	fs.StringVar(&c.natsTLSCert, "nats-tls-cert", "", "with --nats-url: client certificate for NATS servers that require one (with --nats-tls-key)")
	fs.StringVar(&c.natsTLSKey, "nats-tls-key", "", "with --nats-url: the key of --nats-tls-cert")
	fs.IntVar(&c.natsReplicas, "nats-replicas", 3, "with --nats-url: replicas of the log stream and the buckets (at least 1)")
	fs.StringVar(&c.nodeID, "node-id", "", "with --nats-url: this node's id, unique among live nodes ([A-Za-z0-9_-]{1,64}; default: the hostname, other characters as -)")
	fs.StringVar(&c.advertiseURL, "advertise-url", "", "with --nats-url: the URL GET /v1/nodes shows for this node (default: http://<the listen address>, https:// with --tls-cert)")
	fs.StringVar(&c.homeRoot, "home-root", "", `parent of the HOME directories of agents with "home": "isolated" or "per-principal" (default: $XDG_STATE_HOME/acp-gateway/homes or ~/.local/state/acp-gateway/homes)`)

	fs.StringVar(&c.confine, "confine", confineAuto, "confinement of agents, their terminals and the MCP servers they start: auto (Landlock when the kernel has it), landlock (refuse to start without it) or off")

	refused := addHints(fs)

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" {
			return // GATEWAY_VERSION is a common build variable, not a request to print ours
		}
		name := envName(f.Name)
		if v := getenv(name); v != "" {
			if err := f.Value.Set(v); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("%s=%q: %v", name, v, err))
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		usage(fs, stderr)
		return nil, err
	} else if err != nil {
		return nil, flagError(err, refused)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	for _, a := range c.agentFlags {
		if _, err := agents.ParseAgentFlag(a); err != nil {
			return nil, err // at parse time, like every other bad value: exit 2, not a failed start
		}
	}
	switch c.confine {
	case confineAuto, confineLandlock, confineOff:
	default:
		return nil, fmt.Errorf("--confine %q: want auto, landlock or off", c.confine)
	}
	if c.agentQuietNotice < 0 {
		return nil, fmt.Errorf("--agent-quiet-notice must not be negative, got %s", c.agentQuietNotice)
	}
	if c.turnTextMaxBytes < 1 {
		return nil, fmt.Errorf("--turn-text-max-bytes must be at least 1, got %d", c.turnTextMaxBytes)
	}
	if c.workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		c.workdir = wd
	}
	abs, err := filepath.Abs(c.workdir)
	if err != nil {
		return nil, err
	}
	c.workdir = abs
	if c.tokenFile != "" {
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %v", err)
		}
		c.token = strings.TrimSpace(string(b))
		if c.token == "" {
			return nil, errors.New("--token-file: the file is empty")
		}
	}
	if err := checkToken(c.token); err != nil {
		return nil, err
	}
	if c.homeRoot == "" {
		state := getenv("XDG_STATE_HOME")
		if state == "" && getenv("HOME") != "" {
			state = filepath.Join(getenv("HOME"), ".local", "state")
		}
		if state == "" {
			state = os.TempDir()
		}
		c.homeRoot = filepath.Join(state, "acp-gateway", "homes")
	}
	if c.maxTerminals < 1 {
		return nil, fmt.Errorf("--max-terminals-per-session must be at least 1, got %d", c.maxTerminals)
	}
	if c.maxInboundBytes < c.wsMaxFrame {
		return nil, fmt.Errorf("--max-inbound-bytes (%d) must be at least --ws-max-frame (%d): a frame of the largest size must fit", c.maxInboundBytes, c.wsMaxFrame)
	}
	if err := checkListenAddr("addr", c.addr); err != nil {
		return nil, err
	}
	if c.debugAddr != "" {
		if err := checkListenAddr("debug-addr", c.debugAddr); err != nil {
			return nil, err
		}
	}
	if err := c.checkStore(); err != nil {
		return nil, err
	}
	if err := c.checkCluster(); err != nil {
		return nil, err
	}
	if err := c.checkIdentity(); err != nil {
		return nil, err
	}
	if err := c.checkExposure(); err != nil {
		return nil, err
	}
	if err := c.checkTLS(); err != nil {
		return nil, err
	}
	for _, k := range envAllowlist {
		if v := getenv(k); v != "" {
			c.agentEnv = append(c.agentEnv, k+"="+v)
		}
	}
	return c, nil
}

// agentSpecs returns the configured agents: the built-in demo agent first, then the agents file, then --agent.
func (c *config) agentSpecs(demo agents.Spec) ([]agents.Spec, error) {
	specs := []agents.Spec{demo}
	if c.agentsFile != "" {
		fromFile, err := agents.ReadAgentServers(c.agentsFile)
		if err != nil {
			return nil, agentsFileError(c.agentsFile, err)
		}
		specs = append(specs, fromFile...)
	}
	for _, a := range c.agentFlags {
		s, err := agents.ParseAgentFlag(a)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	// A configured agent named "demo" replaces the built-in one.
	for i := len(specs) - 1; i > 0; i-- {
		if specs[i].Name == demo.Name {
			specs = specs[1:]
			break
		}
	}
	return specs, nil
}

// checkExposure refuses to serve agents to the network without a token: whoever can prompt a session can
// make an agent run commands.
func (c *config) checkExposure() error {
	if c.authenticates() || c.insecureNoAuth {
		return nil
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v", c.addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without a token: set GATEWAY_TOKEN (or --token-file, --users, --oidc-issuer, --trusted-user-header), or pass --insecure-no-auth if you really mean to let anyone who can connect run agents", c.addr)
}

// authenticates reports whether any way of identifying callers is configured.
func (c *config) authenticates() bool {
	return c.token != "" || c.usersFile != "" || c.oidcIssuer != "" || c.trustedUserHeader != ""
}

// checkIdentity refuses half-configured ways of identifying callers.
func (c *config) checkIdentity() error {
	switch {
	case (c.oidcIssuer == "") != (c.oidcAudience == ""):
		return errors.New("--oidc-issuer and --oidc-audience go together: a token for any audience is a token for another service")
	case c.trustedUserHeader != "" && c.trustedProxies == "":
		return errors.New("--trusted-user-header needs --trusted-proxies: from anyone else the header is a claim, not an identity")
	case c.maxPerUser < 0:
		return fmt.Errorf("--max-sessions-per-user must be 0 or more, got %d", c.maxPerUser)
	case c.maxConnsPerUser < 0:
		return fmt.Errorf("--max-conns-per-user must be 0 or more, got %d", c.maxConnsPerUser)
	case c.maxACPConnsPerUser < 0:
		return fmt.Errorf("--max-acp-conns-per-user must be 0 or more, got %d", c.maxACPConnsPerUser)
	}
	if _, err := principal.ParseProxies(splitList(c.trustedProxies)); err != nil {
		return fmt.Errorf("--trusted-proxies: %v", err)
	}
	return nil
}

// isolateHomes gives each agent configured with "home": "isolated" a HOME of its own under homeRoot, and
// each "per-principal" one a directory there for its principals' HOMEs.
func (c *config) isolateHomes(specs []agents.Spec) error {
	for i := range specs {
		if specs[i].Home == agents.HomePerPrincipal {
			specs[i].SetHomeRoot(c.homeRoot)
			if err := os.MkdirAll(specs[i].Env["HOME"], 0o700); err != nil {
				return fmt.Errorf("agent %q: per-principal home: %v", specs[i].Name, err)
			}
			continue
		}
		if specs[i].Home != agents.HomeIsolated {
			continue
		}
		dir := filepath.Join(c.homeRoot, specs[i].Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("agent %q: isolated home: %v", specs[i].Name, err)
		}
		env := map[string]string{}
		for k, v := range specs[i].Env {
			env[k] = v
		}
		env["HOME"] = dir
		specs[i].Env = env
	}
	return nil
}

// listenHost is the host part of --addr, which clients may use as a literal Host.
func (c *config) listenHost() string {
	host, _, _ := net.SplitHostPort(c.addr)
	return host
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(list string) []string {
	var out []string
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// checkToken refuses, at start, a token browsers could not present: the UI sends it as a WebSocket subprotocol
// ("bearer.<token>"), and a subprotocol is an RFC 7230 token. Refused later it would look like a wrong token,
// and the UI would retry for ever. "" is no token.
func checkToken(token string) error {
	if token == "" {
		return nil
	}
	if strings.TrimSpace(token) == "" {
		return errors.New("the token is blank: set a real one (e.g. openssl rand -hex 32)")
	}
	for _, r := range token {
		if r > 0x7e || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return errors.New("the token holds a character that cannot travel in a WebSocket subprotocol: use only letters, digits and !#$%&'*+-.^_`|~ (e.g. openssl rand -hex 32)")
		}
	}
	return nil
}

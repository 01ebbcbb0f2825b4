package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	acp "github.com/coder/acp-go-sdk"
)

// Handler receives what an agent sends to its client. The gateway's session implements it.
type Handler interface {
	// SessionUpdate receives the raw params of a `session/update` notification, in wire order. It runs on the
	// SDK's reading goroutine (acp.Connection.HandleNotificationsInline) and must not block, nor wait for the
	// agent: while it runs the SDK reads nothing from the agent's stdout (the agent's writes then block), and
	// requests that follow wait for it.
	SessionUpdate(params json.RawMessage)
	// RequestPermission receives the raw params of `session/request_permission` and returns the raw
	// RequestPermissionResponse. It may block until a client answers; ctx ends when the agent goes away.
	RequestPermission(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
}

// FSHandler is optionally implemented by a Handler that serves the agent's fs/* requests (the gateway is the
// agent's client). Each runs on its own goroutine.
type FSHandler interface {
	ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
	WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
}

// TerminalHandler is optionally implemented by a Handler that serves the agent's terminal/* requests
// (terminal/create, terminal/output, terminal/wait_for_exit, terminal/kill, terminal/release). Each runs on
// its own goroutine; wait_for_exit may block until ctx ends.
type TerminalHandler interface {
	Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError)
}

// ElicitationHandler is optionally implemented by a Handler that puts the agent's `elicitation/create`
// requests to users. RequestElicitation runs on its own goroutine and may block until a user answers;
// CompleteElicitation receives `elicitation/complete` on the SDK's reader goroutine and must not block.
type ElicitationHandler interface {
	RequestElicitation(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	CompleteElicitation(params json.RawMessage)
}

// NoiseHandler is optionally implemented by a Handler that wants to know about stdout lines that are not
// JSON-RPC (a prefix of at most 512 bytes, and the line's full length). Called on the SDK's reader goroutine:
// it must not block.
type NoiseHandler interface {
	AgentNoise(prefix []byte, total int)
}

// Options configures one agent connection. Zero values mean the documented defaults.
type Options struct {
	Cwd         string       // working directory of the agent process (and the ACP session)
	Env         []string     // the environment for external agents, already filtered by the caller; Spec.Env is added
	Handler     Handler      // required
	Logger      *slog.Logger // nil = slog.Default()
	StderrBytes int          // stderr kept for diagnostics; 0 = 64 KiB
	StopGrace   time.Duration
	// WriteTimeout bounds each write to an external agent's stdin; 0 = 30 s. An agent that does not take a
	// message within it is stopped (see Conn.Failure).
	WriteTimeout time.Duration
	// Secrets (MCP env and header values) are replaced by [REDACTED] in the agent's stderr as it is logged
	// and returned by Stderr: an agent may print the configuration it was given.
	Secrets []string
	// LoginEnv ("NAME=value") is what a principal supplied to log the agent in (env_var auth methods): added
	// after Env and Spec.Env, so it overrides only the names it holds. Never trusted for confinement (PATH).
	LoginEnv []string
	// Confiner confines an external agent and what it starts (package confine); nil = unconfined.
	Confiner *confine.Confiner
	// ExtraDirs are granted to a confined agent as its cwd is, read and write: the session's
	// additionalDirectories, already confined by the workspace roots.
	ExtraDirs []string
}

// Conn is one running agent and the ACP connection to it.
type Conn struct {
	// Static after construction.
	spec   Spec
	rpc    *acp.Connection
	stdin  io.WriteCloser
	cmd    *exec.Cmd // nil for built-in agents
	stderr *TailBuffer
	grace  time.Duration
	log    *slog.Logger
	stdout *stdoutWatch
	noise  *noiseLimiter      // the SDK's log of unusable stdout lines
	cancel context.CancelFunc // ends a built-in agent
	tree   *ProcessTree       // nil for built-in agents; what the agent started, killed with it (proctree.go)
	secret []string           // Options.Secrets

	exited  chan struct{} // closed once the process or built-in goroutine has ended
	exitErr error         // written before exited is closed

	mu      sync.Mutex
	failure string // Guarded by mu; why the gateway ended the connection, "" if it did not.

	// dropUpdatesThrough: session/update notifications with a seq up to it are dropped (replay.go); 0 = none.
	dropUpdatesThrough atomic.Uint64

	stopOnce sync.Once
}

// Start launches the agent and connects to it. It does not send `initialize`; the caller does, with its own
// deadline, so a hung agent is a clear error rather than a hang.
func Start(spec Spec, opts Options) (*Conn, error) {
	if opts.Handler == nil {
		return nil, errors.New("agents: nil handler")
	}
	c := &Conn{
		spec:   spec,
		stderr: NewTailBuffer(cmp(opts.StderrBytes, 64<<10)),
		grace:  cmpDur(opts.StopGrace, 2*time.Second),
		log:    opts.Logger,
		exited: make(chan struct{}),
		secret: opts.Secrets,
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	var stdout io.Reader
	switch spec.Kind {
	case KindBuiltin, KindEvents:
		if spec.Builtin == nil {
			return nil, fmt.Errorf("agent %q: built-in agent has no implementation", spec.Name)
		}
		toAgentR, toAgentW := io.Pipe()
		fromAgentR, fromAgentW := io.Pipe()
		ctx, cancel := context.WithCancel(withStderr(context.Background(), c.builtinStderr(opts.Secrets)))
		c.cancel = cancel
		c.stdin = toAgentW
		stdout = fromAgentR
		go func() {
			err := spec.Builtin(ctx, toAgentR, fromAgentW)
			toAgentR.Close()
			fromAgentW.Close()
			c.exitErr = err
			close(c.exited)
		}()
	case KindACP:
		cmd := exec.Command(spec.Command, spec.Args...)
		cmd.Dir = opts.Cwd
		tree := NewProcessTree(c.grace)
		// Never nil (the marker is always there): a nil Env would hand the agent the gateway's whole environment.
		trusted := append(append(append([]string(nil), opts.Env...), envList(spec.Env)...), tree.Env())
		cmd.Env = append(append(slices.Clip(trusted), opts.LoginEnv...), tree.Env()) // the marker last: nothing overrides it
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stderr = &stderrSink{tail: c.stderr, lines: &lineLogger{log: c.log, secrets: opts.Secrets}}
		cmd.WaitDelay = c.grace
		extra := spec.Confine
		extra.Write = append(slices.Clip(extra.Write), opts.ExtraDirs...)
		confined, err := opts.Confiner.Wrap(cmd, extra, trusted) // the operator's environment: nothing a client chose
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", spec.Name, err)
		}
		// Not cmd.StdinPipe: the gateway's end must take write deadlines (stdinWriter).
		inR, inW, err := os.Pipe()
		if err != nil {
			confined.Release()
			return nil, err
		}
		cmd.Stdin = inR
		out, err := cmd.StdoutPipe()
		if err != nil {
			confined.Release()
			inR.Close()
			inW.Close()
			return nil, err
		}
		err = StartProcess(cmd, confined)
		inR.Close() // the agent has its own copy
		if err != nil {
			confined.Release()
			inW.Close()
			return nil, fmt.Errorf("agent %q: start %s: %w", spec.Name, spec.Command, err)
		}
		tree.Started(cmd.Process.Pid)
		c.cmd, c.tree, stdout = cmd, tree, out
		c.stdin = NewStdinWriter(inW, opts.WriteTimeout, c.stdinStuck)
		go func() {
			err := WaitProcess(cmd)
			// Whatever the agent started goes with it, whether it was stopped or exited by itself: its group
			// (npm wrappers spawn the real binary), and what left the group (setsid, double forks).
			tree.Reap()
			confined.Release()
			c.exitErr = err
			close(c.exited)
		}()
	default:
		return nil, fmt.Errorf("agent %q: unknown kind %q", spec.Name, spec.Kind)
	}
	ready := make(chan struct{})
	c.stdout = &stdoutWatch{r: stdout, ready: ready}
	if nh, ok := opts.Handler.(NoiseHandler); ok {
		c.stdout.lines.onNoise = nh.AgentNoise
	}
	c.rpc = acp.NewConnection(c.handle(opts.Handler), c.stdin, c.stdout)
	// The Handler's SessionUpdate never blocks and never waits for the agent, so the SDK's reader can run it
	// itself: one goroutine hand-off less per update. Set before ready: nothing is read before it.
	c.rpc.HandleNotificationsInline()
	c.noise = newNoiseLimiter(boundLogger(c.log, noiseKeep, opts.Secrets).Handler())
	c.rpc.SetLogger(slog.New(c.noise))
	close(ready)
	return c, nil
}

func (c *Conn) handle(h Handler) acp.MethodHandler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
		switch method {
		case acp.ClientMethodSessionUpdate:
			if !c.dropsUpdate() {
				h.SessionUpdate(params)
			}
			return nil, nil
		case acp.ClientMethodSessionRequestPermission:
			// Requests run on their own goroutine and can overtake the tool_call notification read before
			// them; wait until every notification read before this request is handled so clients see wire
			// order.
			if c.rpc.WaitNotificationsBefore(ctx) != nil {
				return nil, acp.NewRequestCancelled(nil)
			}
			res, err := h.RequestPermission(ctx, params)
			if err != nil {
				if ctx.Err() != nil {
					return nil, acp.NewRequestCancelled(nil)
				}
				return nil, acp.NewInternalError(map[string]any{"error": "permission request failed"})
			}
			return res, nil
		case acp.ClientMethodElicitationCreate:
			eh, ok := h.(ElicitationHandler)
			if !ok {
				return nil, acp.NewMethodNotFound(method)
			}
			if c.rpc.WaitNotificationsBefore(ctx) != nil { // wire order, as for permission requests
				return nil, acp.NewRequestCancelled(nil)
			}
			res, err := eh.RequestElicitation(ctx, params)
			if err != nil {
				if ctx.Err() != nil {
					return nil, acp.NewRequestCancelled(nil)
				}
				return nil, acp.NewInternalError(map[string]any{"error": "elicitation failed"})
			}
			return res, nil
		case acp.ClientMethodElicitationComplete:
			if eh, ok := h.(ElicitationHandler); ok {
				eh.CompleteElicitation(params)
			}
			return nil, nil
		case acp.ClientMethodFsReadTextFile, acp.ClientMethodFsWriteTextFile:
			fh, ok := h.(FSHandler)
			if !ok {
				return nil, acp.NewMethodNotFound(method)
			}
			if method == acp.ClientMethodFsReadTextFile {
				return fh.ReadTextFile(ctx, params)
			}
			return fh.WriteTextFile(ctx, params)
		case acp.ClientMethodTerminalCreate, acp.ClientMethodTerminalOutput, acp.ClientMethodTerminalWaitForExit,
			acp.ClientMethodTerminalKill, acp.ClientMethodTerminalRelease:
			th, ok := h.(TerminalHandler)
			if !ok {
				return nil, acp.NewMethodNotFound(method)
			}
			return th.Terminal(ctx, method, params)
		default:
			return nil, acp.NewMethodNotFound(method)
		}
	}
}

// Call sends a request and returns the raw result, with invalid UTF-8 replaced (rawjson.ValidUTF8): raw
// results reach clients as they are (agentInfo, modes, config options). A JSON-RPC error from the agent is an
// *acp.RequestError.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := acp.SendRequest[json.RawMessage](c.rpc, ctx, method, params)
	if err != nil {
		return nil, err
	}
	return rawjson.ValidUTF8(res), nil
}

// Notify sends a notification (session/cancel).
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	return c.rpc.SendNotification(ctx, method, params)
}

// Done is closed when the connection to the agent ends (EOF, crash, protocol failure).
func (c *Conn) Done() <-chan struct{} { return c.rpc.Done() }

// Exited is closed once the agent process (or built-in agent) has ended.
func (c *Conn) Exited() <-chan struct{} { return c.exited }

// ExitErr is the agent's exit status; valid after Exited is closed.
func (c *Conn) ExitErr() error {
	<-c.exited
	return c.exitErr
}

// DrainUpdates waits until every notification read from the agent so far has been handed to the Handler.
// When the agent dies the SDK fails pending calls at once while queued notifications are still being handled;
// the gateway waits so a turn's last updates still count as the turn's. It cannot hang: the Handler never
// blocks, and the SDK hands over what it read even after the connection ended.
func (c *Conn) DrainUpdates() {
	_ = c.rpc.WaitNotificationsHandled(context.Background(), c.rpc.NotificationsRead())
}

// LineTooLong reports whether the agent wrote a stdout line past acp-go-sdk's 10 MiB limit, which ends the
// connection.
func (c *Conn) LineTooLong() bool { return c.stdout.lines.sawTooLong() }

// Failure says why the gateway ended the connection to a misbehaving agent, for the session's failure
// reason; "" when it did not.
func (c *Conn) Failure() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}

// stdinStuck ends an agent that stopped reading its stdin. It runs on the writing goroutine with the SDK's
// write lock held, so it only signals; the exit is handled as any other.
func (c *Conn) stdinStuck(err error) {
	c.mu.Lock()
	if c.failure == "" {
		c.failure = err.Error() + "; the agent was stopped"
	}
	c.mu.Unlock()
	c.log.Warn("agent stopped reading its stdin; killing it", "err", err)
	c.tree.Record()
	c.tree.Kill(syscall.SIGKILL)
}

// Stderr returns the last bytes the agent wrote to stderr.
func (c *Conn) Stderr() string {
	text, _ := Scrub(c.stderr.String(), c.secret)
	return text
}

// Pid is the agent's process id (and process group id), 0 for built-in agents.
func (c *Conn) Pid() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Stop shuts the agent down: close stdin → grace → SIGTERM to the group → grace → SIGKILL to the group;
// whatever it started that left the group is killed after it (proctree.go). It returns once the agent has
// exited and its stdout is read to the end. Safe to call more than once and concurrently.
func (c *Conn) Stop() {
	defer c.flushNoise()
	c.stopOnce.Do(func() {
		if c.cmd != nil {
			c.tree.Record() // while the agent is alive its descendants are still findable as such
		}
		_ = c.stdin.Close()
		if c.cmd == nil {
			t := time.NewTimer(c.grace)
			defer t.Stop()
			select {
			case <-c.exited:
			case <-t.C:
				c.cancel()
			}
			return
		}
		if c.waitExit(c.grace) {
			return
		}
		c.tree.Record()
		c.tree.Kill(syscall.SIGTERM)
		if c.waitExit(c.grace) {
			return
		}
		c.tree.Record()
		c.tree.Kill(syscall.SIGKILL)
	})
	<-c.exited
}

// Kill ends the agent at once (SIGKILL to its group): the cancel grace ran out, or the gateway is failing it.
func (c *Conn) Kill() {
	if c.cmd == nil {
		_ = c.stdin.Close()
		c.cancel()
	} else {
		c.tree.Record()
		c.tree.Kill(syscall.SIGKILL)
	}
	<-c.exited
}

// flushNoise logs the count of suppressed stdout noise once the SDK's reader has ended.
func (c *Conn) flushNoise() {
	<-c.rpc.Done()
	c.noise.state.flushOnce.Do(c.noise.flush)
}

func (c *Conn) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func cmp(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func cmpDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// stderrSink receives an agent's stderr. It implements io.ReaderFrom so os/exec's copying goroutine uses its
// 4 KiB buffer instead of allocating 32 KiB per agent.
type stderrSink struct {
	tail  *TailBuffer
	lines *lineLogger
}

func (s *stderrSink) Write(p []byte) (int, error) {
	s.tail.Write(p)
	return s.lines.Write(p)
}

func (s *stderrSink) ReadFrom(r io.Reader) (int64, error) {
	var buf [4096]byte
	var n int64
	for {
		k, err := r.Read(buf[:])
		if k > 0 {
			n += int64(k)
			_, _ = s.Write(buf[:k])
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// lineLogger logs an agent's stderr line by line at debug level, each line cut to 512 bytes, secrets
// scrubbed (on the line kept with room for the longest secret, so one cut at 512 bytes is not half shown).
type lineLogger struct {
	log     *slog.Logger
	secrets []string // Static after construction.
	part    []byte   // Owned by the exec copying goroutine.
}

func (l *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	keep := 512
	for _, s := range l.secrets {
		keep = max(keep, 512+len(s))
	}
	for len(p) > 0 {
		i := indexByte(p, '\n')
		if i < 0 {
			if len(l.part) < keep {
				l.part = append(l.part, p[:min(len(p), keep-len(l.part))]...)
			}
			break
		}
		if len(l.part) < keep {
			l.part = append(l.part, p[:min(i, keep-len(l.part))]...)
		}
		line, _ := Scrub(string(l.part), l.secrets)
		l.log.Debug("agent stderr", "line", line[:min(len(line), 512)])
		l.part = l.part[:0]
		p = p[i+1:]
	}
	return n, nil
}

func indexByte(p []byte, b byte) int {
	for i, c := range p {
		if c == b {
			return i
		}
	}
	return -1
}

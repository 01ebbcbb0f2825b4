package events

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents/inproc"
	"github.com/acp-gateway/gateway/internal/confine"
)

// Config configures Serve. The zero value of each field means what its comment says; Command is required.
type Config struct {
	Command string   // the program to run, per ACP session
	Args    []string // its arguments
	Env     []string // its whole environment ("K=V"); nil = an empty environment, nothing is inherited
	Name    string   // agentInfo.name in the initialize response; "" = "events"
	// Confiner confines each process and what it starts; nil = unconfined. Confine is what it adds.
	Confiner *confine.Confiner
	Confine  confine.Extra

	Logger      *slog.Logger // connection diagnostics and dropped lines; nil = discarded
	StderrBytes int          // stderr kept per process for diagnostics; 0 = 64 KiB
	// Stderr also receives each process's stderr (agents.BuiltinStderr: the gateway's quiet-turn notice
	// shows it); nil = kept per process only.
	Stderr        io.Writer
	MaxLineBytes  int           // longest stdout line accepted; longer lines are dropped; 0 = 4 MiB
	MaxFieldBytes int           // bound on tool-call fields (translate/events); 0 = 64 KiB, < 0 = unbounded
	KeepSecrets   bool          // false: secrets in tool-call fields, titles and warnings are redacted
	StopGrace     time.Duration // each wait of the shutdown sequence; 0 = 2 s
	CancelGrace   time.Duration // how long a cancelled turn waits for the process's done; 0 = 10 s
	// WriteTimeout bounds each write to a process's stdin; 0 = 30 s. A process that does not take an event
	// within it is killed, and its turn fails saying so.
	WriteTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "events"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.StderrBytes <= 0 {
		c.StderrBytes = 64 << 10
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = 4 << 20
	}
	if c.StopGrace <= 0 {
		c.StopGrace = 2 * time.Second
	}
	if c.CancelGrace <= 0 {
		c.CancelGrace = 10 * time.Second
	}
	return c
}

// Serve runs one events-dialect ACP agent on the given streams (requests read from in, everything else
// written to out) until in reaches EOF or ctx is done. It returns nil on a clean EOF, ctx.Err() when ctx
// ended first, and the read error otherwise. When ctx ends first, Serve closes in if it is an io.Closer
// (the only way to stop the SDK's reader). Writes to out are not bounded by a deadline: the caller keeps
// reading out, or closes its read end, until Serve has returned.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Command == "" {
		return errors.New("events: no command configured")
	}
	cfg = cfg.withDefaults()
	a := newAgent(cfg)
	return inproc.Serve(ctx, in, out, inproc.Agent{
		Name:    "events",
		Handler: a,
		Attach:  func(conn *acp.AgentSideConnection) { a.conn = conn },
		Stop:    a.shutdown,
		Work:    &a.work,
		Logger:  cfg.Logger,
	})
}

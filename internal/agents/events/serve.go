package events

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Config configures Serve. The zero value of each field means what its comment says; Command is required.
type Config struct {
	Command string   // the program to run, per ACP session
	Args    []string // its arguments
	Env     []string // its whole environment ("K=V"); nil = an empty environment, nothing is inherited
	Name    string   // agentInfo.name in the initialize response; "" = "events"

	Logger        *slog.Logger  // connection diagnostics and dropped lines; nil = discarded
	StderrBytes   int           // stderr kept per process for diagnostics; 0 = 64 KiB
	MaxLineBytes  int           // longest stdout line accepted; longer lines are dropped; 0 = 4 MiB
	MaxFieldBytes int           // bound on tool-call fields (translate/events); 0 = 64 KiB, < 0 = unbounded
	KeepSecrets   bool          // false: secrets in tool-call fields, titles and warnings are redacted
	StopGrace     time.Duration // each wait of the shutdown sequence; 0 = 2 s
	CancelGrace   time.Duration // how long a cancelled turn waits for the process's done; 0 = 10 s
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

// errClosedEarly is returned when the SDK's reader stopped without the input reporting an error, e.g. on a
// line longer than the SDK's limit.
var errClosedEarly = errors.New("events: ACP connection closed before end of input")

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
	src := newGatedReader(in)
	a := newAgent(cfg)
	conn := acp.NewAgentSideConnection(a, out, src)
	conn.SetLogger(cfg.Logger)
	a.conn = conn
	src.open()

	var ctxErr error
	select {
	case <-conn.Done():
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	a.shutdown()
	if ctxErr != nil {
		if c, ok := in.(io.Closer); ok {
			_ = c.Close()
			<-conn.Done()
		}
	}
	a.work.closeAndWait()

	if ctxErr != nil {
		return ctxErr
	}
	switch err := src.err(); {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	default:
		return errClosedEarly
	}
}

// gatedReader holds back the SDK's first Read until the connection is set up (SetLogger and a.conn are
// written after NewAgentSideConnection starts its reader) and remembers the input's first error, so Serve
// can tell a clean EOF from a broken stream.
type gatedReader struct {
	r    io.Reader
	gate chan struct{}

	mu       sync.Mutex
	firstErr error // Guarded by mu.
}

func newGatedReader(r io.Reader) *gatedReader { return &gatedReader{r: r, gate: make(chan struct{})} }

func (r *gatedReader) open() { close(r.gate) }

func (r *gatedReader) Read(p []byte) (int, error) {
	<-r.gate
	n, err := r.r.Read(p)
	if err != nil {
		r.mu.Lock()
		if r.firstErr == nil {
			r.firstErr = err
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *gatedReader) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}

// tracker counts in-flight work (handlers, permission requests) so Serve can wait for all of it. Unlike a
// WaitGroup it may be entered while someone waits: late work is refused once it is closed.
type tracker struct {
	mu     sync.Mutex
	cond   *sync.Cond // Signals n reaching zero; uses mu.
	n      int        // Guarded by mu.
	closed bool       // Guarded by mu.
}

func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

func (t *tracker) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.cond != nil {
		t.cond.Broadcast()
	}
}

func (t *tracker) closeAndWait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
	}
	for t.n > 0 {
		t.cond.Wait()
	}
}

// tailBuffer keeps the last max bytes written to it (a process's stderr). Safe for concurrent use.
type tailBuffer struct {
	max int // Static after construction.

	mu  sync.Mutex
	buf []byte // Guarded by mu.
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// tail returns at most n of the last bytes kept.
func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

package agents

import (
	"context"
	"io"
	"sync"
)

// Received is how many bytes the agent has written to its stdout so far. A turn during which it does not
// move is a turn in which the agent has said nothing (internal/sessions' quiet-turn notice).
func (c *Conn) Received() uint64 { return c.stdout.read.Load() }

type stderrKey struct{}

// withStderr gives a built-in agent's context the writer its diagnostics go to.
func withStderr(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, stderrKey{}, w)
}

// BuiltinStderr is the stderr of the built-in agent running with ctx: what it writes there is kept and logged
// like an external agent's stderr (Conn.Stderr). Outside a built-in agent it is io.Discard.
func BuiltinStderr(ctx context.Context) io.Writer {
	if w, ok := ctx.Value(stderrKey{}).(io.Writer); ok {
		return w
	}
	return io.Discard
}

// builtinStderr is the stderr sink of a built-in agent, serialised: unlike a process's stderr, which one
// copying goroutine reads, a built-in agent may write from several goroutines.
func (c *Conn) builtinStderr(secrets []string) io.Writer {
	return &lockedWriter{w: &stderrSink{tail: c.stderr, lines: &lineLogger{log: c.log, secrets: secrets}}}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer // Guarded by mu.
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

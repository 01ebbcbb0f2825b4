package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	acp "github.com/coder/acp-go-sdk"
)

// ErrClosedEarly is returned (prefixed with Agent.Name) when the SDK's reader stopped without the input
// reporting an error, e.g. on a line longer than the SDK's 10 MiB limit.
var ErrClosedEarly = errors.New("ACP connection closed before end of input")

// Agent is what Serve needs of an agent. It is a struct of hooks rather than an interface so that the
// agent's own type gains no methods: Handler goes to the SDK as is, and the SDK type-asserts it for
// optional methods that a wrapper would hide.
type Agent struct {
	// Name prefixes the errors Serve makes itself ("demo" → "demo: ACP connection closed …").
	Name string
	// Handler implements the ACP methods. Handlers that send to the peer, or start goroutines that do,
	// run inside Work.
	Handler acp.Agent
	// Attach hands the agent its connection. Serve calls it once, after SetLogger and before the SDK may
	// read the first message, so handlers can use the connection without synchronization.
	Attach func(*acp.AgentSideConnection)
	// Stop makes all in-flight work return promptly (cancels turns, stops processes). Serve calls it once,
	// when the input has ended or ctx is done, before it waits for Work.
	Stop func()
	// Work is the agent's in-flight work. Serve closes it and waits for it before returning.
	Work *Tracker
	// Logger receives acp-go-sdk's connection diagnostics. Nil: discarded, because an agent that is opened
	// and closed per session would otherwise log at INFO every time.
	Logger *slog.Logger
}

// Serve runs agent a, speaking ACP on the given streams (requests read from in, everything else written to
// out), until in reaches EOF or ctx is done. It returns nil on a clean EOF, ctx.Err() when ctx ended first,
// the read error if in failed, and ErrClosedEarly (prefixed with a.Name) if the SDK stopped reading on its
// own.
//
// When ctx ends first, Serve closes in if it is an io.Closer, because that is the only way to stop the
// SDK's reader, which is blocked in in.Read. A reader that cannot be closed keeps that one SDK goroutine
// until it returns.
//
// Before returning, Serve calls a.Stop and waits for a.Work. Writes to out are not bounded by a deadline
// (the SDK does not observe contexts while writing), so the caller must keep reading out, or close its
// read end, until Serve has returned.
func Serve(ctx context.Context, in io.Reader, out io.Writer, a Agent) error {
	src := newGatedReader(in)
	conn := acp.NewAgentSideConnection(a.Handler, out, src)
	logger := a.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	conn.SetLogger(logger)
	a.Attach(conn)
	src.open()

	var ctxErr error
	select {
	case <-conn.Done():
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	// Stop the agent first: work blocked on the peer (a permission answer) or on time (a pause) returns at
	// once.
	a.Stop()
	if ctxErr != nil {
		if c, ok := in.(io.Closer); ok {
			_ = c.Close()
			<-conn.Done()
		}
	}
	// The SDK may have started a handler just before its reader stopped; closing refuses it.
	a.Work.CloseAndWait()

	if ctxErr != nil {
		return ctxErr
	}
	switch err := src.err(); {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	default:
		return fmt.Errorf("%s: %w", a.Name, ErrClosedEarly)
	}
}

package demo

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/coder/acp-go-sdk"
)

// Options configures the demo agent. The zero value is ready to use.
type Options struct {
	// Delay is paused between the steps of a turn so that streaming is
	// visible to a human. Zero: no pause.
	Delay time.Duration
	// Logger receives acp-go-sdk's connection diagnostics (decode errors,
	// "connection closed"). Nil: discarded, because an in-process agent
	// that is opened and closed per session would otherwise log at INFO
	// every time.
	Logger *slog.Logger
}

// errClosedEarly is returned when the SDK's reader stopped without the input
// reporting an error, e.g. on a line longer than the SDK's 10 MiB limit.
var errClosedEarly = errors.New("demo: ACP connection closed before end of input")

// Serve runs one demo agent speaking ACP on the given streams (it reads
// requests from in, writes to out) until in reaches EOF or ctx is done. It
// returns nil on a clean EOF, ctx.Err() when ctx ended first, and the read
// error otherwise.
//
// When ctx ends first, Serve closes in if it is an io.Closer, because that is
// the only way to stop the SDK's reader, which is blocked in in.Read. A
// reader that cannot be closed keeps that one SDK goroutine until it returns.
//
// Before returning, Serve waits for every turn and every goroutine of its
// own. Writes to out are not bounded by a deadline (the SDK does not observe
// contexts while writing), so the caller must keep reading out, or close its
// read end, until Serve has returned.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	src := newGatedReader(in)
	sink := newWatchWriter(out)
	a := newAgent(opts, sink)
	defer a.stop()

	conn := acp.NewAgentSideConnection(a, sink, src)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	conn.SetLogger(logger)
	a.conn = conn
	src.open()

	var ctxErr error
	select {
	case <-conn.Done():
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	// Stop turns first: a turn blocked on a permission answer or a pause
	// returns at once.
	a.stop()
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

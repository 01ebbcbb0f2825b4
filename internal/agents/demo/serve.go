package demo

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents/inproc"
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
	sink := newWatchWriter(out)
	a := newAgent(opts, sink)
	defer a.stop()
	return inproc.Serve(ctx, in, sink, inproc.Agent{
		Name:    "demo",
		Handler: a,
		Attach:  func(conn *acp.AgentSideConnection) { a.conn = conn },
		// Stopping cancels a.base: a turn blocked on a permission answer or a
		// pause returns at once.
		Stop:   a.stop,
		Work:   &a.work,
		Logger: opts.Logger,
	})
}

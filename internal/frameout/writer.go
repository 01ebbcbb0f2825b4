package frameout

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-gateway/gateway/internal/metrics"
)

// Writer runs a connection's writes under a watchdog and counts them. One goroutine writes; the watchdog
// and the context's end run on their own.
//
// Frames are written without a context: given one that can end, coder/websocket arms and disarms a
// context.AfterFunc around every frame (about a tenth of the gateway's CPU with ten clients), and an SSE
// response has no per-write deadline at all. The watchdog bounds writes instead: it runs every timeout/2
// and aborts the connection when the same write was in progress at its previous run too, so a stuck write
// ends after timeout/2..timeout, as with a deadline; the connection is also aborted when the context ends
// during a write. Per frame, that costs two atomic stores.
type Writer struct {
	// Static after construction.
	ctx     context.Context
	timeout time.Duration
	abort   func() // makes the write in progress fail (closes the socket, expires the write deadline); must not block
	face    *metrics.Face
	batch   Batcher // holds frames until Flush; nil: each write goes out by itself. Set by Batch before writing.

	started atomic.Uint64 // writes begun; written by the writing goroutine
	done    atomic.Uint64 // the number of the last write finished; written by the writing goroutine
	seen    uint64        // started at the watchdog's previous run; owned by the watchdog (read under mu)
	dog     *time.Timer   // the watchdog; re-arms itself until stopped

	// Once Stop has returned, abort is never called (an SSE response must not be touched after its handler
	// has returned): an abort registers under mu, runs without it, and Stop waits for it.
	mu       sync.Mutex
	stopped  bool          // Guarded by mu.
	aborting chan struct{} // Guarded by mu; non-nil while an abort runs, closed when it has returned.

	stopOnCancel func() bool // Static after Start.
}

// Start returns a writer whose writes are aborted (abort) when one takes longer than timeout or ctx ends
// during it. Call Stop once writing is over.
func Start(ctx context.Context, timeout time.Duration, face *metrics.Face, abort func()) *Writer {
	w := &Writer{ctx: ctx, timeout: timeout, abort: abort, face: face}
	w.dog = time.AfterFunc(time.Hour, w.watch) // armed below, once w.dog is set for watch to re-arm
	w.dog.Reset(timeout / 2)
	w.stopOnCancel = context.AfterFunc(ctx, w.ctxEnded)
	return w
}

// ctxEnded aborts the write in progress, if any, when the writer's context ends.
func (w *Writer) ctxEnded() { w.abortIf(w.writing, nil) }

// Stop disarms the watchdog; the writer must not be used after.
func (w *Writer) Stop() {
	w.stopOnCancel()
	w.mu.Lock()
	w.stopped = true
	inFlight := w.aborting
	w.mu.Unlock()
	w.dog.Stop()
	if inFlight != nil {
		<-inFlight
	}
}

// Batch makes the writer hold frames in b until Flush, so that frames ready together leave in one write(2).
// The face flushes whenever it has caught up: before it waits, and before it closes. Call it before the
// first write.
func (w *Writer) Batch(b Batcher) *Writer {
	w.batch = b
	return w
}

// Flush sends the held frames under the watchdog. It runs even when the context has ended (a close frame
// follows), bounded by the watchdog as any write.
func (w *Writer) Flush() error {
	if w.batch == nil {
		return nil
	}
	return w.run(w.batch.Flush)
}

// Write runs write, one frame of n bytes, under the watchdog and counts it. It fails at once when the
// writer's context has ended. With a Batcher, the frame may wait for Flush.
func (w *Writer) Write(n int, write func() error) error {
	if w.batch != nil {
		w.batch.Hold()
	}
	err := w.Run(write)
	if err == nil {
		w.face.FrameOut(n)
	}
	return err
}

// Run runs write under the watchdog without counting a frame (an SSE heartbeat). The context is looked at
// once the write counts as begun: a context that ends after the look finds a write in progress and aborts it.
func (w *Writer) Run(write func() error) error {
	k := w.started.Add(1)
	if err := w.ctx.Err(); err != nil {
		w.done.Store(k)
		return err
	}
	err := write()
	w.done.Store(k)
	return err
}

func (w *Writer) run(write func() error) error {
	k := w.started.Add(1)
	err := write()
	w.done.Store(k)
	return err
}

// writing reports whether a write is in progress.
func (w *Writer) writing() bool { return w.done.Load() != w.started.Load() }

// abortIf aborts the connection when stuck() holds, unless the writer is stopped or an abort already runs.
// before (if set) runs first, so what it records is there by the time the failed write returns.
func (w *Writer) abortIf(stuck func() bool, before func()) bool {
	w.mu.Lock()
	if w.stopped || w.aborting != nil || !stuck() {
		w.mu.Unlock()
		return false
	}
	done := make(chan struct{})
	w.aborting = done
	w.mu.Unlock()
	if before != nil {
		before()
	}
	w.abort()
	w.mu.Lock()
	w.aborting = nil
	w.mu.Unlock()
	close(done)
	return true
}

// watch is the write watchdog (see Writer).
func (w *Writer) watch() {
	started := w.started.Load()
	// A client that stopped reading is as evicted as one that lagged too far; counted before the abort, so
	// the eviction is on record once the write fails.
	if w.abortIf(func() bool { return started == w.seen && w.done.Load() != started }, w.face.Evicted) {
		return // the write fails and the writer ends the connection
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.seen = started
		w.dog.Reset(w.timeout / 2)
	}
}

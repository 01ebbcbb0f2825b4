// Package inbound bounds the memory WebSocket readers hold for the frames clients send. Every socket reader
// of the gateway (`/v1/sessions/{id}/ws` and `/acp`) reads through one shared Budget: a frame's bytes are
// reserved before they are read into memory and released once the frame has been handled, so many sockets
// sending large frames at once hold at most the budget, not sockets × --ws-max-frame.
//
// A reader reserves a small first chunk, waiting a bounded time for it when the budget is exhausted, then
// grows its buffer by doubling, reserving each growth. Only one reader at a time (the grower) may wait for a
// growth while it holds a reservation; any other reader whose growth does not fit fails at once and releases
// what it held. So readers never wait on each other in a cycle, and under contention one large frame still
// gets through instead of every reader holding half a frame. A reader that cannot get budget within the
// wait gets ErrBusy and its socket is closed with 1013 (try again later).
package inbound

import (
	"context"
	"sync"
	"time"
)

// Budget is the total of inbound frame bytes all readers may hold at once. A nil *Budget is unlimited.
type Budget struct {
	total int64         // Static after construction.
	wait  time.Duration // Static after construction; how long a reader waits for its first chunk.
	// frameTimeout bounds how long a message may take to arrive once its header has; 0 = unbounded. Static
	// after construction.
	frameTimeout time.Duration

	mu     sync.Mutex
	used   int64         // Guarded by mu; bytes reserved now.
	peak   int64         // Guarded by mu; the most ever reserved at once.
	freed  chan struct{} // Guarded by mu; closed (and replaced) by the next release; nil when nobody waits.
	grower bool          // Guarded by mu; a reader is waiting for a growth while holding budget.
}

// DefaultWait is how long a reader waits for its first chunk of budget before its socket is closed with 1013.
const DefaultWait = 5 * time.Second

// New returns a budget of total bytes (total > 0) whose readers wait at most wait (DefaultWait when 0) for
// their first chunk.
func New(total int64, wait time.Duration) *Budget {
	if wait <= 0 {
		wait = DefaultWait
	}
	return &Budget{total: total, wait: wait}
}

// WithFrameTimeout makes every message read under b arrive whole within d of its header (0 = unbounded), or
// its connection is closed. Call it before the budget is used.
func (b *Budget) WithFrameTimeout(d time.Duration) *Budget {
	b.frameTimeout = d
	return b
}

// Peak reports the most bytes ever reserved at once: never more than the total.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// InUse reports the bytes reserved now.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// tryTake reserves n bytes if they are free. When they are not, it returns a channel that is closed by the
// next release.
func (b *Budget) tryTake(n int64) (bool, <-chan struct{}) {
	if b == nil {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n <= b.total {
		b.used += n
		b.peak = max(b.peak, b.used)
		return true, nil
	}
	if b.freed == nil {
		b.freed = make(chan struct{})
	}
	return false, b.freed
}

// take reserves n bytes, waiting at most b.wait (or until ctx ends) for them to be free.
func (b *Budget) take(ctx context.Context, n int64) bool {
	ok, freed := b.tryTake(n)
	if ok {
		return true
	}
	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	for {
		select {
		case <-freed:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
		if ok, freed = b.tryTake(n); ok {
			return true
		}
	}
}

// takeMore reserves n more bytes for a reader that already holds some: at once, or by waiting as the one
// grower when no other reader is.
func (b *Budget) takeMore(ctx context.Context, n int64) bool {
	if ok, _ := b.tryTake(n); ok {
		return true
	}
	b.mu.Lock()
	claimed := !b.grower
	b.grower = true
	b.mu.Unlock()
	if !claimed {
		return false
	}
	defer func() {
		b.mu.Lock()
		b.grower = false
		b.mu.Unlock()
	}()
	return b.take(ctx, n)
}

// give releases n bytes and wakes the readers waiting for budget.
func (b *Budget) give(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
}

// Package conngroup tracks a face's open connections so a graceful shutdown can tell them to close and wait
// for them. A bare sync.WaitGroup is not enough: a connection accepted while Shutdown already waits would call
// Add concurrently with Wait, which the WaitGroup forbids (and the race detector reports). Here, joining
// after Close is refused.
package conngroup

import (
	"context"
	"sync"
)

// Group is a set of open connections. The zero value is not usable; call New.
type Group struct {
	done chan struct{} // Closed by Close: connections end (with 1001) when they see it.

	mu     sync.Mutex
	closed bool           // Guarded by mu.
	wg     sync.WaitGroup // Add only under mu while !closed, so it never races with Wait.
	once   sync.Once
}

// New returns an open group.
func New() *Group { return &Group{done: make(chan struct{})} }

// Join registers a connection; false once the group is closed (the caller refuses the connection). Each
// successful Join needs one Leave.
func (g *Group) Join() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

// Leave ends a connection registered by Join.
func (g *Group) Leave() { g.wg.Done() }

// Closing is closed once Close has been called.
func (g *Group) Closing() <-chan struct{} { return g.done }

// Close refuses new connections and tells the open ones to end. It does not wait.
func (g *Group) Close() {
	g.once.Do(func() {
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		close(g.done)
	})
}

// Wait closes the group and waits until every connection has left, or ctx ends.
func (g *Group) Wait(ctx context.Context) error {
	g.Close()
	left := make(chan struct{})
	go func() { g.wg.Wait(); close(left) }()
	select {
	case <-left:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

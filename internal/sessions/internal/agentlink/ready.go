package agentlink

import (
	"context"
	"sync"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"
)

// Ready holds a new session's gate while its start waits for session/new (ReadyGate); the zero value holds
// none. It is safe for concurrent use.
type Ready struct{ gate atomic.Pointer[ReadyGate] }

// ReadyGate puts a new session's session_ready frame where the agent's session/new answer is in wire order:
// what the agent sent before its answer is logged before it, what it sends after waits (on the SDK's reading
// goroutine, in SessionUpdate) until start has logged it or given up.
type ReadyGate struct {
	in       *Ready
	answered atomic.Bool  // set on the reading goroutine when it reads the answer
	held     atomic.Int32 // updates waiting for open
	open     chan struct{}
	once     sync.Once
}

// NewGate holds the agent's updates that follow its session/new answer until the gate's Release.
func (r *Ready) NewGate() *ReadyGate {
	g := &ReadyGate{in: r, open: make(chan struct{})}
	r.gate.Store(g)
	return g
}

// Wait holds an update the agent sent after its session/new answer until session_ready is logged.
func (r *Ready) Wait() {
	if g := r.gate.Load(); g != nil && g.answered.Load() {
		g.held.Add(1)
		<-g.open
	}
}

// Held is how many agent updates wait for session_ready; 0 when the start holds none.
func (r *Ready) Held() int32 {
	if g := r.gate.Load(); g != nil {
		return g.held.Load()
	}
	return 0
}

// Watch returns ctx for the session/new call: its answer, once read, holds the updates that follow it.
func (g *ReadyGate) Watch(ctx context.Context) context.Context {
	return acp.WithResponseWatermark(ctx, func(_ uint64, isError bool) {
		if !isError {
			g.answered.Store(true)
		}
	})
}

// Release lets the held updates through; start calls it once session_ready is logged, or when it fails.
func (g *ReadyGate) Release() {
	g.once.Do(func() {
		g.in.gate.Store(nil)
		close(g.open)
	})
}

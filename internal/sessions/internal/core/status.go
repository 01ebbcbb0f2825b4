package core

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/acp-gateway/gateway/internal/sessions/internal/statusfold"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// A session's status is what its log states (packages fold and statusfold): the owner folds each gateway
// frame as it logs it (appendGatewayLocked), a restart and another node's copy as they read it back
// (putStoredLocked).

// logStatusLocked logs `_gateway/session_status {status, reason}`, which sets the status. The caller holds mu.
func (s *Session) logStatusLocked(status store.Status, reason string) {
	s.appendGatewayLocked(statusfold.SessionStatus, "", map[string]any{"status": status, "reason": reason})
}

// logReadyLocked logs `_gateway/session_ready`: the agent answered session/new, and the starting session is
// idle. The caller holds mu.
func (s *Session) logReadyLocked() {
	s.appendGatewayLocked(statusfold.SessionReady, "", map[string]any{"status": store.StatusIdle})
}

// ReadyGate puts a new session's session_ready frame where the agent's session/new answer is in wire order:
// what the agent sent before its answer is logged before it, what it sends after waits (on the SDK's reading
// goroutine, in SessionUpdate) until start has logged it or given up.
type ReadyGate struct {
	answered atomic.Bool  // set on the reading goroutine when it reads the answer
	held     atomic.Int32 // updates waiting for open
	open     chan struct{}
	once     sync.Once
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
func (g *ReadyGate) Release(s *Session) {
	g.once.Do(func() {
		s.ready.Store(nil)
		close(g.open)
	})
}

// waitReady holds an update the agent sent after its session/new answer until session_ready is logged.
func (s *Session) waitReady() {
	if g := s.ready.Load(); g != nil && g.answered.Load() {
		g.held.Add(1)
		<-g.open
	}
}

// reattachingNow reports whether a prompt is re-attaching the session.
func (s *Session) reattachingNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reattaching
}

// stoodDownNow reports whether the session was stood down.
func (s *Session) stoodDownNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stoodDown
}

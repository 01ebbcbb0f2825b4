package core

import (
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/stream"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
)

// Hooks for the tests of the role code: they read or set the core's state that no role needs, so that those
// tests need no field of the core.

// SetBeforeSnapshotForTest makes Detail call fn right before it builds the snapshot JSON (nil: nothing).
func (c Control) SetBeforeSnapshotForTest(fn func()) { c.s.beforeSnapshotJSON = fn }

// TryLock tries to take the session's mu.
func (c Control) TryLock() bool { return c.s.mu.TryLock() }

// SetEpochChain sets the log's epoch chain, as a hydration does.
func (c Control) SetEpochChain(chain []eventlog.EpochStart) { c.s.setEpochChain(chain) }

// EpochChain is the log's epoch chain, nil for a log in one epoch.
func (c Control) EpochChain() []eventlog.EpochStart {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.state.Epochs
}

// ResolvedOrder is the ids of the resolved permission requests, oldest first.
func (c Control) ResolvedOrder() []string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.state.Perms.ResolvedOrder()
}

// PublishedPresence is the version and list of the watchers the session last published.
func (c Control) PublishedPresence() (uint64, []stream.Watcher) { return c.s.presence.Published() }

// Stopping reports whether a detach is stopping the agent.
func (c Control) Stopping() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.stopping
}

// Closing reports whether the session's end has begun.
func (c Control) Closing() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.closing
}

// RestoreFrom rebuilds the session from a stored log and directory view, as a restart does.
func (c Control) RestoreFrom(entries []eventlog.Entry, dv views.DirView) error {
	return c.s.restoreFrom(entries, dv)
}

// DirViewLocked is what the session's directory entry says of it. The caller holds mu.
func (c Control) DirViewLocked() views.DirView { return c.s.agent.DirView() }

// HeldUpdates is how many agent updates wait for session_ready; 0 when the start holds none.
func (c Control) HeldUpdates() int32 {
	return c.s.ready.Held()
}

// BareSessionForTest is a session of only a log in epoch, without a host or an agent; the caller sets its
// runner.
func BareSessionForTest(epoch string, log *eventlog.Log) *Session {
	return &Session{Epoch: epoch, log: log}
}

// BeginTurnForTest makes a turn of id the session's running turn without an agent, as a benchmark of the
// agent's updates needs.
func (c Control) BeginTurnForTest(id string, startedAt time.Time) {
	c.s.state.Turn = turns.New(id, startedAt, principal.Principal{}, nil)
	c.s.tctx.BeginTurn(id)
}

// RestartTurnTextForTest does with the running turn's text what the turn's end does (its result takes the
// text) once the text reached MaxTurnTextBytes, and starts collecting again. The caller holds mu.
func (c Control) RestartTurnTextForTest() {
	c.s.state.Turn.RestartTextForTest()
}

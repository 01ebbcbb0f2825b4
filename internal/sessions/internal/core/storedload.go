package core

import (
	"fmt"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// LoadDetached hydrates a cold session from its stored log and leaves it detached (failed stays failed): no
// agent runs. stoppedLocked runs first and persistLocked last (with the log's head), under mu with the
// restore, so no close and no append comes between; their errors are returned as they are.
func (c Control) LoadDetached(entries []eventlog.Entry, stoppedLocked func() error, persistLocked func(head uint64) error) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := stoppedLocked(); err != nil {
		return err
	}
	if err := s.restoreFromLocked(entries, s.agent.DirView()); err != nil {
		return fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	}
	if s.state.Status != store.StatusFailed {
		s.state.Status = store.StatusDetached // whatever the log last said, no agent runs
	}
	s.cold = nil
	return persistLocked(s.log.Head())
}

// RestoreLive rebuilds a new session, not shared, from its whole stored log as live as its entry said: the
// log's own status frames and turns decide its state.
func (c Control) RestoreLive(entries []eventlog.Entry) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cold, s.state.Status, s.state.Reason = nil, store.StatusIdle, ""
	return s.restoreFromLocked(entries, s.agent.DirView())
}

package core

import (
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/fold"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate"
)

// What a fork (fork.go) reads of its source and writes to its own log.

// ForkableLocked is why the session cannot be a fork's source now, or nil: it is forked between turns, once
// its agent opened its session. The caller holds mu.
func (c Control) ForkableLocked() error {
	s := c.s
	if err := s.state.Ended(); err != nil {
		return err
	}
	switch {
	case s.state.Turn != nil, s.reattaching, s.state.Status == store.StatusRunning:
		return fmt.Errorf("%w: a session is forked between turns", sessionerr.ErrTurnRunning)
	case s.state.Status == store.StatusStarting || s.agent.SID == "":
		return sessionerr.ErrNotReady
	}
	return nil
}

// ReplayLocked is the transcript as session/update params, as Replay gives it. The caller holds mu.
func (c Control) ReplayLocked() [][]byte { return c.s.tctx.Replay() }

// LogInherited logs a fork's inherited transcript as the first frames of its log, translated and folded as
// an agent's updates are (outside any turn), and records where the fork's own frames begin.
func (c Control) LogInherited(history [][]byte) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	meta := translate.GatewayMeta{Epoch: s.Epoch}
	for _, params := range history {
		u, err := s.tctx.UpdateFrame(params, meta)
		if err != nil {
			s.logger.Warn("fork: dropping a malformed transcript update", "err", err)
			continue
		}
		if _, err := s.log.Append(fold.Kind("session/update", u.Kind), func(seq uint64) ([]byte, error) { return u.Frame(seq) }); err != nil && !errors.Is(err, eventlog.ErrLogClosed) {
			s.logger.Error("append to log", "method", "session/update", "err", err)
		}
	}
	_, s.forkedAt = s.log.Bounds()
}

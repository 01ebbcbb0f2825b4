package core

import (
	"fmt"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/fold"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
)

// A session rebuilt from its log (durable modes, docs/cluster-design.md §1): the frames say everything a live session
// knows about its transcript, turns and permission requests. What they do not say is in DirView.

// Resumability reports the agent session id and what the agent advertised at its last start.
func (s *Session) Resumability() views.Resumability {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent.Resumability()
}

// restoreFrom rebuilds, from logged frames in log order, what the live session knew: the log itself, the
// snapshot, the turns (the running one, the latest, lastTurn, their text), the pending permission requests
// (as data: a restored session has no agent waiting for the answers), the resolved ids, the status the log
// last stated, the epoch chain and Epoch (its last link). The session must be new (newSession) and not yet
// shared. A running turn's cancelRequested is not logged: a restored running turn reads false.
func (s *Session) restoreFrom(entries []eventlog.Entry, dv views.DirView) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restoreFromLocked(entries, dv)
}

// restoreFromLocked is restoreFrom with mu held: a cold session's hydration (sessions/recover.go) is listed already.
func (s *Session) restoreFromLocked(entries []eventlog.Entry, dv views.DirView) error {
	s.agent.TakeView(dv)
	for _, e := range entries {
		if err := s.putStoredLocked(e.Seq, e.Frame); err != nil {
			return fmt.Errorf("restore frame %d: %w", e.Seq, err)
		}
	}
	// The session goes on in the epoch its frames last carry (the chain's last link), not in the one
	// newSession drew: clients holding it resume, and what is logged next continues it.
	if e := s.lastEpochLocked(); e != s.Epoch { // a cold session already holds it: no write
		s.Epoch = e
	}
	return nil
}

// errNotFolded wraps why a stored frame was logged but not folded into the session's state.
type errNotFolded struct{ err error }

func (e errNotFolded) Error() string { return "frame not folded: " + e.err.Error() }
func (e errNotFolded) Unwrap() error { return e.err }

// putStoredLocked adds a stored frame to the log, with the kind its method says, and folds it as the live
// calls that logged it did (fold.State.Frame). A frame it cannot read is logged all the same (KindUnknown: readers decode it)
// and the error is an errNotFolded. The caller holds mu.
func (s *Session) putStoredLocked(seq uint64, frame []byte) error {
	// Checked before the fold, which Put would refuse: the snapshot must never hold a frame the log does not.
	if head := s.log.Head(); head > 0 && seq <= head {
		return fmt.Errorf("%w: seq %d is not after the head %d", eventlog.ErrSeqOrder, seq, head)
	}
	info, readErr := s.tctx.Restore(frame)
	kind := eventlog.KindUnknown
	if readErr == nil {
		kind = fold.Kind(info.Method, info.Kind)
	}
	if err := s.log.Put(seq, kind, frame); err != nil {
		return err
	}
	if readErr != nil {
		return errNotFolded{readErr}
	}
	if err := s.state.Frame(seq, info, fold.Limits{MaxTurnText: s.cfg.MaxTurnTextBytes, PermissionTimeout: s.cfg.PermissionTimeout}); err != nil {
		return errNotFolded{err}
	}
	return nil
}

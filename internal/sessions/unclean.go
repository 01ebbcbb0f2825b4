package sessions

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// An unclean stop (docs/cluster.md §4): an entry whose session was live, or detached without every frame
// stored, when its process died. Its stored log ends at the durable head H, possibly inside a turn. Recover
// claims the entry and closes the log with the frames the live session would have written, through Fork in
// a new epoch from H+1: tool-call closers and turn_ended (finishTurn), permission_resolved {by: restart}
// denials (denyPendingLocked) and session_status detached. Clients holding the old epoch and a cursor at or
// before H resume without a resync (the epoch chain); past H they get epoch_changed.

const (
	restartReason   = "gateway restarted"
	restartTurnText = "gateway restarted during the turn"
	forkAttempts    = 5
)

// uncleanEntry reports whether an entry was written by a process that did not stop cleanly.
func uncleanEntry(e DirEntry) bool {
	return (e.Status != StatusDetached && e.Status != StatusFailed) || !e.Clean || e.Closer != ""
}

// closeUnclean claims an unclean entry, writes its closing frames once and returns the entry (detached or
// failed, clean) with its revision. Run again on a log that is already closed, it writes no frame.
func (r *Registry) closeUnclean(ctx context.Context, e DirEntry, rev uint64) (DirEntry, uint64, error) {
	dir := r.cfg.Store.Dir()
	e.Closer = r.cfg.NodeID
	rev, err := dir.Update(ctx, e, rev)
	if err != nil {
		return e, 0, fmt.Errorf("claim: %w", err)
	}
	for range forkAttempts {
		s, fence, err := r.restoredFromStore(ctx, e, rev)
		if err != nil {
			return e, 0, err
		}
		s.closeRoot() // a private session: no fs/* will ask
		frames := s.closingFrames()
		if len(frames) > 0 {
			err = r.cfg.Store.Fork(ctx, e.ID, fence, frames)
			if errors.Is(err, ErrFenced) {
				continue // a frame landed after the feed: read again
			}
			if err != nil {
				return e, 0, fmt.Errorf("fork: %w", err)
			}
		}
		done := s.dirEntry()
		done.Clean, done.Closer = true, ""
		nrev, err := dir.Update(ctx, done, rev)
		if err != nil {
			return e, 0, fmt.Errorf("release: %w", err)
		}
		if len(frames) > 0 {
			s.logger.Info("closed a session the last process left open", "fromSeq", frames[0].Seq, "frames", len(frames))
		}
		return done, nrev, nil
	}
	return e, 0, fmt.Errorf("fork: %w after %d attempts", ErrFenced, forkAttempts)
}

// restoredFromStore is a private session (never listed) rebuilt from the stored log, and the fence for Fork.
func (r *Registry) restoredFromStore(ctx context.Context, e DirEntry, rev uint64) (*Session, uint64, error) {
	s, err := r.coldSession(e, rev)
	if err != nil {
		return nil, 0, err
	}
	var entries []Entry
	fence, err := r.cfg.Store.Feed(ctx, e.ID, false, func(f StoredFrame) error {
		if f.GapTo == 0 {
			entries = append(entries, Entry{Seq: f.Seq, Frame: f.Frame})
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("feed: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// As live as the entry said: the log's own status frames and turns decide from here.
	s.cold, s.status, s.statusReason = nil, StatusIdle, ""
	if err := s.restoreFromLocked(entries, s.dirViewLocked()); err != nil {
		return nil, 0, err
	}
	return s, fence, nil
}

// closingFrames appends to the private session's log what closes it, in a new epoch, and returns those
// frames; none when the log already ends closed (a Recover that ran before).
func (s *Session) closingFrames() []StoredFrame {
	s.mu.Lock()
	head := s.log.Head()
	t := s.turn
	if t == nil && len(s.perms) == 0 && (s.status == StatusDetached || s.status == StatusFailed) {
		s.mu.Unlock()
		return nil
	}
	s.Epoch = uuid.NewString() // the session is not shared: nothing reads Epoch concurrently
	answers := s.denyPendingLocked("", "restart", restartReason)
	s.mu.Unlock()
	deliver(answers) // restored requests have no agent waiting; their answer channels take it
	if t != nil {
		s.finishTurn(t, "end_turn", errors.New(restartTurnText), "")
	}
	s.mu.Lock()
	if s.status != StatusFailed {
		s.status, s.statusReason = StatusDetached, restartReason
		s.appendGatewayLocked("_gateway/session_status", "", map[string]any{"status": StatusDetached, "reason": restartReason})
	}
	s.mu.Unlock()
	res, err := s.log.Read(head, 1<<20, nil)
	if err != nil {
		return nil
	}
	out := make([]StoredFrame, 0, len(res.Entries))
	for _, en := range res.Entries {
		out = append(out, StoredFrame{Seq: en.Seq, Epoch: s.Epoch, Frame: en.Frame})
	}
	return out
}

package core

import (
	"errors"

	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
)

// A copy is this node's session of another node's (the follower, package follow): its state comes from the
// owner's stored frames and directory entries, folded here, and is never written back.

// InitCopy makes a session just made from a directory entry the copy of another node's session: its actions
// run by run, it says the entry's status until its frames state one, and it logs with the owner's node.
// Called before the session is shared.
func (c Control) InitCopy(run Runner, e store.DirEntry, rev uint64) {
	s := c.s
	s.run = run
	s.shares.SetRev(rev)
	// What the copy says until its frames state a status (a log that states none is a session starting, or
	// one an older gateway wrote, which logged no starting → idle); the cold listing shows the entry's.
	s.state.Status, s.state.Reason = e.Status, e.Reason
	s.cold.Status, s.cold.Reason = e.Status, e.Reason
	s.logger = s.logger.With("owner", e.Owner)
}

// ApplyCopiedFrame folds one frame of the owner's stored log into the copy, under mu: the log, then the state
// the frame changes. A frame the copy holds already, or one arriving while it closes, is skipped; a frame
// that does not fold is logged and kept. folded runs under mu once the frame is in, with whether the
// session is closed now; an error leaves before it.
func (c Control) ApplyCopiedFrame(seq uint64, frame []byte, folded func(closed bool)) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.log.Head() || s.closing {
		return nil
	}
	asked := s.state.Perms.Len()
	if err := s.putStoredLocked(seq, frame); err != nil {
		if !errors.As(err, new(errNotFolded)) {
			return err
		}
		s.logger.Warn("follower: frame not folded", "seq", seq, "err", err)
	}
	if s.state.Perms.Len() > asked {
		s.state.DecideCopiedRequest(seq, s.Policy)
	}
	folded(s.state.Status == store.StatusClosed)
	return nil
}

// ApplyCopiedEntryLocked takes what a directory entry (at rev) and its view say that the log does not: modes,
// config options, the agent's info and session. A cold copy lists from the entry (its title, last turn and
// status), unless the entry is behind the frames a paused copy folded. The caller holds mu.
func (c Control) ApplyCopiedEntryLocked(e store.DirEntry, dv views.DirView, rev uint64) {
	s := c.s
	s.agent.TakeEntry(e, dv)
	if c := s.cold; c != nil {
		c.TakeEntry(e, dv.Title, dv.LastTurn, rev)
	}
}

// TakeCopiedShares takes the shares of the directory entry at rev, unless the copy holds a newer entry's (a
// lookup read a newer entry than the watch delivers, or a share made through this node). A principal no
// longer shared with loses its streams here too.
func (c Control) TakeCopiedShares(list []store.Share, rev uint64) {
	s := c.s
	if s.shares.TakeAt(list, rev) {
		s.sharesChanged()
	}
}

// ShareOnCopy makes on the copy at once a share change the owner made in the entry at rev (0 = unknown): with's
// role, "" ending it. A copy that holds a newer entry already (the change, or what came after it) keeps it.
func (c Control) ShareOnCopy(rev uint64, with string, role store.ShareRole) {
	s := c.s
	if s.shares.SetAt(rev, with, role) {
		s.sharesChanged()
	}
}

// FailedOrClosed is what a copy answers at once for a session that is failed or closed as far as it knows:
// ErrFailed with the reason, or ErrClosed; nil otherwise.
func (c Control) FailedOrClosed() error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Ended()
}

// CloseCopyLocked marks a copy closing and closed: its owner closed or removed the session. It logs nothing,
// the copy never writes. The caller holds mu.
func (c Control) CloseCopyLocked() { c.s.closing, c.s.state.Status = true, store.StatusClosed }

// EndCopy closes a closed copy's log and fires Closed: faces close their sockets as for a closed session.
func (c Control) EndCopy() {
	s := c.s
	s.log.Close()
	close(s.closed)
}

// MarkClosingLocked marks the session's end begun (a copy at shutdown): a frame its feed still delivers is
// not folded. The caller holds mu.
func (c Control) MarkClosingLocked() { c.s.closing = true }

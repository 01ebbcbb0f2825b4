package takeover

import (
	"context"
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/store"
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

// closeSpec says how a log left open is closed: who denies its pending requests (permission_resolved.by)
// and why, the error its open turn ends with, and the status it ends in. One mechanism serves an unclean stop
// (mode b and mode c, §4), a takeover of a lost node's session and a node's return (§5).
type closeSpec struct {
	by       string       // permission_resolved.by of the denials
	deny     string       // the denials' reason
	turnText string       // the open turn's error message
	status   store.Status // what an open log ends as (unless it already says failed)
	reason   string       // its session_status reason
	// takeover: another node's session; its entry keeps that owner and loses its incarnation (the stale
	// owner's directory writer refuses then: package durable).
	takeover bool
	// revive: a log a node loss closed (failed, node_lost) comes back detached with reason, in its epoch.
	revive bool
}

var restartClose = closeSpec{by: "restart", deny: restartReason, turnText: restartTurnText, status: store.StatusDetached, reason: restartReason}

// uncleanEntry reports whether an entry was written by a process that did not stop cleanly.
func uncleanEntry(e store.DirEntry) bool {
	return (e.Status != store.StatusDetached && e.Status != store.StatusFailed) || !e.Clean || e.Closer != ""
}

// errNotClaimed is a closeStored whose claim lost its compare-and-swap: the entry changed since it was read.
var errNotClaimed = errors.New("the entry changed before it was claimed")

// closeUnclean claims an unclean entry, writes its closing frames once and returns the entry (detached or
// failed, clean) with its revision. Run again on a log that is already closed, it writes no frame.
func (t *Taker) closeUnclean(ctx context.Context, e store.DirEntry, rev uint64) (store.DirEntry, uint64, error) {
	return t.closeStored(ctx, e, rev, restartClose)
}

// closeStored claims the entry (closer: this node), rebuilds the session from the stored log into a private
// session, writes what closes it as c says (through Fork with the feed's fence: a frame that landed since is
// read again) and releases the entry (closer cleared, clean). The closing frames are a function of the
// stored log, so whoever redoes it after a closer died writes nothing twice.
func (t *Taker) closeStored(ctx context.Context, e store.DirEntry, rev uint64, c closeSpec) (store.DirEntry, uint64, error) {
	dir := t.cfg.Store.Dir()
	e.Closer = t.cfg.NodeID
	if c.takeover {
		e.Status, e.Reason, e.Incarnation = store.StatusFailed, ReasonNodeLost, ""
	}
	rev, err := dir.Update(ctx, e, rev)
	if err != nil {
		if errors.Is(err, store.ErrRevision) {
			return e, 0, fmt.Errorf("claim: %w: %w", errNotClaimed, err)
		}
		return e, 0, fmt.Errorf("claim: %w", err)
	}
	for range forkAttempts {
		s, link, fence, err := t.restoredFromStore(ctx, e, rev)
		if err != nil {
			return e, 0, err
		}
		core.ControlOf(s).CloseRoot() // a private session: no fs/* will ask
		frames := link.ClosingFrames(c.logClosing())
		if len(frames) > 0 {
			err = t.cfg.Store.Fork(ctx, e.ID, fence, frames)
			if errors.Is(err, store.ErrFenced) {
				continue // a frame landed after the feed: read again
			}
			if err != nil {
				return e, 0, fmt.Errorf("fork: %w", err)
			}
		}
		done := link.Entry()
		done.Clean, done.Closer = true, ""
		if c.takeover {
			done.Owner, done.Incarnation = e.Owner, "" // its cwd and its agent's own state are there
		}
		nrev, err := dir.Update(ctx, done, rev)
		if err != nil {
			return e, 0, fmt.Errorf("release: %w", err)
		}
		if len(frames) > 0 {
			core.ControlOf(s).SessionLogger().Info("closed a session left open", "by", c.by, "fromSeq", frames[0].Seq, "frames", len(frames), "status", done.Status)
		}
		return done, nrev, nil
	}
	return e, 0, fmt.Errorf("fork: %w after %d attempts", store.ErrFenced, forkAttempts)
}

// restoredFromStore is a private session (never listed) rebuilt from the stored log, its store link (never
// started), and the fence for Fork.
func (t *Taker) restoredFromStore(ctx context.Context, e store.DirEntry, rev uint64) (*core.Session, *durable.Link, uint64, error) {
	s, link, err := t.host.Cold(e, rev)
	if err != nil {
		return nil, nil, 0, err
	}
	var entries []eventlog.Entry
	fence, err := t.cfg.Store.Feed(ctx, e.ID, false, func(f store.StoredFrame) error {
		if f.GapTo == 0 {
			entries = append(entries, eventlog.Entry{Seq: f.Seq, Frame: f.Frame})
		}
		return nil
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("feed: %w", err)
	}
	if err := core.ControlOf(s).RestoreLive(entries); err != nil {
		return nil, nil, 0, err
	}
	return s, link, fence, nil
}

// logClosing is what c says of closing the log itself.
func (c closeSpec) logClosing() core.LogClosing {
	lc := core.LogClosing{By: c.by, Deny: c.deny, TurnText: c.turnText, Status: c.status, Reason: c.reason}
	if c.revive {
		lc.ReviveFrom = ReasonNodeLost
	}
	return lc
}

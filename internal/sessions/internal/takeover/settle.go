package takeover

import (
	"context"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/store"
)

// A restart races the node-loss handling of the process it replaces (docs/cluster.md §6, fast restart): the
// restarted node claims its id when the old key expires, which is when the other nodes start taking its
// sessions over, so both claim the same entries. A claim that loses is not the end: the entry is read again
// and decided again, and a takeover still in progress is waited for, then undone as a node return.

const (
	// settleClaims bounds the claims Recover makes for one entry: each lost one means another writer moved
	// the entry on (a takeover claimed or released it), and there are only so many of those.
	settleClaims = 8
	// takeoverWait bounds the wait for another node's claim on an entry of this node: a takeover holds it
	// for one log fork; a closer that died is redone by the others once its key expires, or, past this
	// bound, claimed here.
	takeoverWait    = 2 * store.NodeTTL
	takeoverPollMin = 20 * time.Millisecond
	takeoverPollMax = 500 * time.Millisecond
)

// Settle brings one of this node's entries to rest before it is listed: a closed one removed, an unclean
// stop closed (detached "gateway restarted"), a node loss undone (detached "node returned"). ok is false when
// the session is not to be listed: removed, or its stop could not be closed.
func (t *Taker) Settle(ctx context.Context, e store.DirEntry, rev uint64) (_ store.DirEntry, _ uint64, ok bool) {
	var waitedSince time.Time
	poll := takeoverPollMin
	for claims := 0; ; {
		var err error
		switch {
		case e.Status == store.StatusClosed:
			if err := t.cfg.Store.Remove(ctx, e.ID); err != nil {
				t.cfg.Logger.Warn("remove a closed session from the store", "session", e.ID, "err", err)
			}
			return e, rev, false
		case e.Closer != "" && e.Closer != t.cfg.NodeID && (waitedSince.IsZero() || time.Since(waitedSince) < takeoverWait):
			// Another node is taking it over (this node's previous process was declared lost): its result is
			// a node loss this node then undoes. Claiming under it would race its fork.
			if waitedSince.IsZero() {
				waitedSince = time.Now()
				t.cfg.Logger.Info("stored session: waiting for another node's takeover to end", "session", e.ID, "closer", e.Closer)
			}
			if err := sleepCtx(ctx, poll); err != nil {
				return e, rev, false
			}
			poll = min(2*poll, takeoverPollMax)
			if e, rev, err = t.reread(ctx, e); err != nil {
				return e, rev, false
			}
			continue
		case claims == settleClaims:
			t.cfg.Logger.Warn("stored session not restored: its entry kept changing", "session", e.ID, "claims", claims)
			return e, rev, false
		case uncleanEntry(e):
			claims++
			ne, nrev, err := t.closeUnclean(ctx, e, rev)
			if errors.Is(err, errNotClaimed) {
				if e, rev, err = t.reread(ctx, e); err != nil {
					return e, rev, false
				}
				continue
			}
			if err != nil {
				t.cfg.Logger.Warn("stored session not restored: its unclean stop could not be closed", "session", e.ID, "err", err)
				return e, rev, false
			}
			e, rev = ne, nrev // closed; its log may say a node loss closed it first: decided again
			continue
		case t.cfg.Cluster != nil && e.Status == store.StatusFailed && e.Reason == ReasonNodeLost:
			// Node return (docs/cluster.md §5): the survivors failed it while this node was gone; here, where
			// its cwd and its agent's state are, it can be re-attached.
			claims++
			ne, nrev, err := t.closeStored(ctx, e, rev, nodeReturnClose)
			if errors.Is(err, errNotClaimed) {
				if e, rev, err = t.reread(ctx, e); err != nil {
					return e, rev, false
				}
				continue
			}
			if err != nil {
				t.cfg.Logger.Warn("session lost with this node stays failed: it could not be claimed back", "session", e.ID, "err", err)
				return e, rev, true
			}
			return ne, nrev, true
		}
		return e, rev, true
	}
}

// reread is the entry's current value after a lost claim or while another node holds it. An entry that is
// gone (a close removed it) or cannot be read is reported and not listed.
func (t *Taker) reread(ctx context.Context, e store.DirEntry) (store.DirEntry, uint64, error) {
	gctx, cancel := context.WithTimeout(ctx, durable.DirWriteTimeout)
	defer cancel()
	ne, rev, err := t.cfg.Store.Dir().Get(gctx, e.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		t.cfg.Logger.Info("stored session removed while it was restored", "session", e.ID)
	case err != nil:
		t.cfg.Logger.Warn("stored session not restored: its entry could not be read again", "session", e.ID, "err", err)
	}
	return ne, rev, err
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

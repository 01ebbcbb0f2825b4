package sessions

import (
	"context"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
)

// ExpireStored is the retention janitor of a store mode: every age/10 (at least a minute, at most an hour)
// it closes and removes this node's detached and failed sessions whose directory entry was not updated for
// age (in mode c also those of nodes that are not live), until ctx ends. A session with a subscriber is left alone; the entry's revision guards the removal
// against a change since the janitor read it.
func (r *Registry) ExpireStored(ctx context.Context, age time.Duration) {
	if r.cfg.Store == nil || age <= 0 {
		return
	}
	tick := time.NewTicker(min(max(age/10, time.Minute), time.Hour))
	defer tick.Stop()
	for {
		r.expireStored(ctx, r.now().Add(-age))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// expireStored removes the sessions expired at cutoff; it reports how many.
func (r *Registry) expireStored(ctx context.Context, cutoff time.Time) int {
	dir := r.cfg.Store.Dir()
	entries, revs, err := dir.List(ctx)
	if err != nil {
		r.cfg.Logger.Warn("retention: directory list", "err", err)
		return 0
	}
	n := 0
	for i, e := range entries {
		if (e.Status != store.StatusDetached && e.Status != store.StatusFailed) || !e.UpdatedAt.Before(cutoff) {
			continue
		}
		if e.Owner != r.cfg.NodeID {
			if r.cfg.Cluster != nil && !r.liveNode(e.Owner) && r.expireForeign(ctx, e, revs[i]) {
				n++ // a node that is gone (mode c): any node removes its expired sessions
			}
			continue
		}
		s, err := r.lookup(e.ID)
		if err != nil || s.Clients() > 0 {
			continue
		}
		e.Status, e.Reason = store.StatusClosed, "retention"
		if _, err := dir.Update(ctx, e, revs[i]); err != nil {
			continue // changed since the list (ErrRevision), or the store failed: the next round decides
		}
		s.Close("retention: not used for longer than the retention period")
		n++
	}
	return n
}

// expireForeign removes an expired session of a node that is not live: closed by CAS on the revision listed
// (one janitor wins), then removed; the followers end with the removal.
func (r *Registry) expireForeign(ctx context.Context, e store.DirEntry, rev uint64) bool {
	e.Status, e.Reason = store.StatusClosed, "retention"
	if _, err := r.cfg.Store.Dir().Update(ctx, e, rev); err != nil {
		return false
	}
	if err := r.cfg.Store.Remove(ctx, e.ID); err != nil {
		r.cfg.Logger.Warn("retention: remove a session of a node that is gone", "session", e.ID, "owner", e.Owner, "err", err)
	}
	return true
}

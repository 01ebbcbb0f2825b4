package sessions

import (
	"context"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/store"
)

// runCluster: see RunCluster. The directory watch runs on its own goroutine until ctx ends, starting over
// after a failure; each change reaches the follower it concerns, or lists a new one. The node watch takes
// over the sessions of lost nodes (package takeover).
func (r *Registry) runCluster(ctx context.Context) error {
	if err := r.cfg.Cluster.Serve(ctx, func(ctx context.Context, cmd store.Command) store.Reply {
		return follow.Serve(ctx, followHost{r}, cmd)
	}); err != nil {
		return err
	}
	r.takeover.WatchNodes(ctx)
	go follow.Retry(ctx, func() error { return r.cfg.Store.Dir().Watch(ctx, r.dirChanged) }, func(err error, wait time.Duration) {
		r.cfg.Logger.Warn("directory watch failed; watching again", "err", err, "in", wait)
	})
	return nil
}

// dirChanged applies one directory change: another node's session is listed (a cold follower), updated, or
// ended when its entry is removed or says closed. This node's own entries are its sessions' business, except
// one another node took over from this process while it was cut off: that session stands down.
func (r *Registry) dirChanged(e store.DirEntry, rev uint64, deleted bool) {
	r.mu.Lock()
	s := r.followers[e.ID]
	own := r.sessions[e.ID]
	if deleted || e.Status == store.StatusClosed {
		r.removed.add(e.ID, rev)
	}
	r.mu.Unlock()
	switch {
	case deleted || e.Status == store.StatusClosed:
		if s != nil {
			go follow.Of(s).Close()
		}
	case own != nil && !deleted && r.takeover.TakenFrom(e):
		if !core.ControlOf(own).IsCold() {
			r.cfg.Logger.Warn("a session of this node was taken over", "session", e.ID, "closer", e.Closer, "status", e.Status, "reason", e.Reason)
			go localOf(own).standDown()
		}
	case e.Owner == "" || e.Owner == r.cfg.NodeID:
	case s != nil:
		follow.Of(s).ApplyEntry(e, rev)
	default:
		copied, err := r.addFollower(e, rev)
		if err != nil {
			if !errors.Is(err, sessionerr.ErrShuttingDown) && !errors.Is(err, sessionerr.ErrNotFound) { // not found: closed meanwhile
				r.cfg.Logger.Warn("session of another node not listed", "session", e.ID, "owner", e.Owner, "err", err)
			}
			return
		}
		follow.Of(copied).ApplyEntry(e, rev) // a lookup may have registered it from an older read of the entry
	}
}

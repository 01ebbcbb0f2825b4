package durable

import (
	"context"
	"fmt"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// Load feeds the stored log into the session (restoreFrom), leaves it detached (or failed) and starts the
// write-behind after its head, where a re-attach goes on.
func (d *Link) Load() error {
	s := d.s
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.StartTimeout)
	defer cancel()
	var entries []eventlog.Entry
	_, err := d.st.Feed(ctx, s.ID, false, func(f store.StoredFrame) error {
		if f.GapTo == 0 { // a gap needs no call: Put restarts the ring at the next frame
			entries = append(entries, eventlog.Entry{Seq: f.Seq, Frame: f.Frame})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	}
	stopped := func() error {
		return d.host.StoppedLocked(s) // a shutdown or a close came first: it closed the log and took the (absent) write-behind
	}
	return core.ControlOf(s).LoadDetached(entries, stopped, func(head uint64) error {
		if !d.startPersister(s.ID, s.Epoch, s.Log(), head) {
			return sessionerr.ErrShuttingDown
		}
		go d.watchFence(d.persister())
		return nil
	})
}

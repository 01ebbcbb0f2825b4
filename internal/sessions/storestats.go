package sessions

import (
	"time"

	"github.com/acp-gateway/gateway/internal/store"
)

// StoreStats is the write-behind of every session together (--data-dir metrics): lag now, and counters that
// include the sessions already closed or shut down.
type StoreStats struct {
	LagFrames     uint64
	LagBytes      int64
	OldestUnacked time.Duration // max over sessions
	Errors        uint64
	Frames        uint64 // acknowledged by the store
	Gaps          uint64
}

// StoreStats sums the sessions' write-behinds; zero in memory mode.
func (r *Registry) StoreStats() StoreStats {
	var out StoreStats
	if r.cfg.Store == nil {
		return out
	}
	out.Errors, out.Frames, out.Gaps = r.retired.Totals()
	for _, s := range r.List() {
		st, frames := durableOf(s).Stats()
		out.LagFrames += st.LagFrames
		out.LagBytes += st.LagBytes
		out.OldestUnacked = max(out.OldestUnacked, st.OldestUnacked)
		out.Errors += st.Errors
		out.Frames += frames
		out.Gaps += st.Gaps
	}
	return out
}

// Thresholds of StoreState: a frame unacknowledged this long makes the node's store lagging, then down.
const (
	storeLaggingAfter = time.Second
	storeDownAfter    = 5 * time.Second
)

// StoreState is the node's write-behind health as its heartbeat and GET /v1/nodes report it (docs/cluster.md
// §3): ok, lagging (a frame unacknowledged for over 1 s) or down (over 5 s: the store is not answering).
func (r *Registry) StoreState() store.StoreState {
	st := r.StoreStats()
	out := store.StoreState{State: "ok", LagFrames: st.LagFrames, LagBytes: st.LagBytes, OldestUnackedSeconds: st.OldestUnacked.Seconds()}
	switch {
	case st.OldestUnacked > storeDownAfter:
		out.State = "down"
	case st.OldestUnacked > storeLaggingAfter:
		out.State = "lagging"
	}
	return out
}

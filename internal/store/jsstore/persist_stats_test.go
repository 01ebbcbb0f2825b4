package jsstore

import (
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
)

// TestStatsLeavesTheWakeUnarmed: reading a persister's stats (every /metrics scrape and node beat) must not
// make the log's next append allocate a wake channel, as a reader waiting on the log does; Stats read the
// lag with Log.Read, which hands the wake out.
func TestStatsLeavesTheWakeUnarmed(t *testing.T) {
	l := eventlog.NewLog(eventlog.LogLimits{})
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update"}`)
	encode := func(uint64) ([]byte, error) { return frame, nil }
	for range 600 { // the ring grows to 1024 here, so the appends below move into room it has
		if _, err := l.Append(eventlog.KindUpdate, encode); err != nil {
			t.Fatal(err)
		}
	}
	p := &persister{log: l} // nothing acknowledged: Stats reads the lag of every frame
	if st := p.Stats(); st.LagFrames != 600 || st.LagBytes != 600*int64(len(frame)) {
		t.Fatalf("stats %+v, want 600 frames of %d bytes behind", st, len(frame))
	}
	allocs := testing.AllocsPerRun(100, func() {
		p.Stats()
		if _, err := l.Append(eventlog.KindUpdate, encode); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("an append after Stats allocates %v times, want 0", allocs)
	}
}

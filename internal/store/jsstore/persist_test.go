package jsstore_test

import (
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A flood of frames, a few of them 3 MiB (stored as parts), comes back from Feed byte for byte, in order,
// each once. The ring keeps only 1000 frames: the pin holds what is not yet stored (MaxLag is large enough
// for the whole flood, which an in-process append loop produces far faster than any store).
func TestPersistFeedByteIdentical(t *testing.T) {
	n := uint64(100_000)
	if testing.Short() {
		n = 10_000
	}
	big := func(seq uint64) bool { return seq%(n/4) == 7 }
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{MaxLag: 1 << 30})
	l := sessions.NewLog(sessions.LogLimits{MaxFrames: 1000})
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	start := time.Now()
	appendFrames(t, l, 1, n, big)
	flush(t, p)
	t.Logf("%d frames stored in %s", n, time.Since(start))
	if got := p.Durable(); got != n {
		t.Fatalf("Durable() = %d after Flush, want %d", got, n)
	}
	t.Logf("stats %+v", p.Stats())
	stored, _ := feedAll(t, st, "s1")
	checkFrames(t, stored, "e1", n, big)
	if s := p.Stats(); s.LagFrames != 0 || s.Gaps != 0 {
		t.Fatalf("stats after flush: %+v", s)
	}
}

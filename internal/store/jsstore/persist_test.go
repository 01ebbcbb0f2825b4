package jsstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
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
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 1000})
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

// The server goes away mid-flood and comes back on the same store: the writer backs off, republishes from
// Durable(), and the stored log still holds 1..N once each, with no gap.
func TestPersistSurvivesServerRestart(t *testing.T) {
	const n = 8_000
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{MaxLag: 1 << 30})
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 1000})
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	appendFrames(t, l, 1, n/2, never)
	waitFor(t, "a quarter of the frames stored", func() bool { return p.Durable() >= n/4 })
	srv.Stop()
	appendFrames(t, l, n/2+1, 3*n/4, never)
	srv.Start()
	appendFrames(t, l, 3*n/4+1, n, never)
	flush(t, p)
	if p.Stats().Errors == 0 {
		t.Fatal("no publish failed: the restart did not happen mid-flood")
	}
	stored, _ := feedAll(t, st, "s1")
	checkFrames(t, stored, "e1", n, never)
}

// Past MaxLag unacknowledged bytes the ring trims unstored frames, and the writer stores exactly one gap
// marker for them; the frames before and after are intact.
func TestPersistMaxLagOverflowOneGap(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{MaxLag: 32 << 10})
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	appendFrames(t, l, 1, 50, never)
	flush(t, p)
	srv.Stop()
	appendFrames(t, l, 51, 2000, never) // ~220 KB while nothing can be stored
	srv.Start()
	flush(t, p) // the writer caught up, so the next frames cannot outrun the pin again
	appendFrames(t, l, 2001, 2100, never)
	flush(t, p)
	stored, _ := feedAll(t, st, "s1")
	var gaps []store.StoredFrame
	next := uint64(1)
	for _, f := range stored {
		if f.Seq != next {
			t.Fatalf("stored frame at %d, want %d", f.Seq, next)
		}
		if f.GapTo > 0 {
			gaps = append(gaps, f)
			next = f.GapTo + 1
			continue
		}
		if string(f.Frame) != string(frameOf(f.Seq, false)) {
			t.Fatalf("frame %d differs", f.Seq)
		}
		next++
	}
	if next != 2101 {
		t.Fatalf("stored log ends at %d, want 2100", next-1)
	}
	if len(gaps) != 1 || gaps[0].Seq != 51 {
		t.Fatalf("gaps %+v, want exactly one starting at 51", gaps)
	}
	if s := p.Stats(); s.Gaps != 1 {
		t.Fatalf("Stats().Gaps = %d, want 1", s.Gaps)
	}
}

// JetStream has no per-subject byte limit: the writer purges what falls out of LogMaxBytes, so the stored log
// holds its newest frames within the budget (plus at most an eighth, the purge's amortization).
func TestPersistLogMaxBytes(t *testing.T) {
	const budget = 10_000
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{LogMaxBytes: budget})
	l := eventlog.NewLog(eventlog.LogLimits{})
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	appendFrames(t, l, 1, 1000, never)
	flush(t, p)
	stored, _ := feedAll(t, st, "s1")
	var bytes int
	for i, f := range stored {
		if f.Seq != stored[0].Seq+uint64(i) || string(f.Frame) != string(frameOf(f.Seq, false)) {
			t.Fatalf("stored frame %d: seq %d", i, f.Seq)
		}
		bytes += len(f.Frame)
	}
	if len(stored) == 0 || stored[len(stored)-1].Seq != 1000 {
		t.Fatalf("the newest frame is not stored: %d frames", len(stored))
	}
	if bytes < budget*3/4 || bytes > budget*9/8+len(frameOf(1000, false)) {
		t.Fatalf("stored %d bytes (%d frames from %d) for a budget of %d", bytes, len(stored), stored[0].Seq, budget)
	}
}

// While the server is down the lag shows in Stats, Flush gives up with its context, and Stop ends the writer
// (goleak checks that nothing outlives it).
func TestPersistStatsFlushStopWhileDown(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{})
	l := eventlog.NewLog(eventlog.LogLimits{})
	p := st.Persist("s1", "e1", l, 0)
	appendFrames(t, l, 1, 10, never)
	flush(t, p)
	srv.Stop()
	appendFrames(t, l, 11, 30, never)
	waitFor(t, "a failed publish", func() bool { return p.Stats().Errors > 0 })
	s := p.Stats()
	if s.LagFrames != 20 || s.LagBytes <= 0 {
		t.Fatalf("stats while down: %+v, want 20 frames of lag", s)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if err := p.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush while down: %v, want context.Canceled", err)
	}
	p.Stop()
	if p.Durable() != 10 {
		t.Fatalf("Durable() = %d, want 10", p.Durable())
	}
}

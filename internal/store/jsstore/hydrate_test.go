package jsstore_test

import (
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// putAll hydrates a log from the store as the registry will: every stored frame through Log.Put; a gap marker
// needs no call, the next frame's seq restarts the ring after it.
func putAll(t *testing.T, stored []store.StoredFrame) *eventlog.Log {
	t.Helper()
	l := eventlog.NewLog(eventlog.LogLimits{})
	for _, f := range stored {
		if f.GapTo > 0 {
			continue
		}
		if err := l.Put(f.Seq, eventlog.KindUpdate, f.Frame); err != nil {
			t.Fatalf("Put(%d): %v", f.Seq, err)
		}
	}
	return l
}

// sameFrames checks that b holds exactly a's frames after seq `after`, seq for seq and byte for byte.
func sameFrames(t *testing.T, a, b *eventlog.Log, after uint64) {
	t.Helper()
	ra, err := a.Read(after, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Read(after, 1<<20, nil)
	if err != nil {
		t.Fatalf("hydrated log after %d: %v", after, err)
	}
	if len(ra.Entries) != len(rb.Entries) {
		t.Fatalf("hydrated log holds %d frames after %d, the live one %d", len(rb.Entries), after, len(ra.Entries))
	}
	for i := range ra.Entries {
		if ra.Entries[i].Seq != rb.Entries[i].Seq || string(ra.Entries[i].Frame) != string(rb.Entries[i].Frame) {
			t.Fatalf("frame %d differs between the live and the hydrated log", ra.Entries[i].Seq)
		}
	}
}

// A log hydrated from the store through Log.Put reads exactly like the live log it was persisted from; after
// a stored gap, a reader from before the gap gets ErrTruncated (the resync), one after it the same frames.
func TestHydrateThroughLogPut(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{MaxLag: 32 << 10})
	live := eventlog.NewLog(eventlog.LogLimits{})
	p := st.Persist("s1", "e1", live, 0)
	defer p.Stop()
	appendFrames(t, live, 1, 500, never)
	flush(t, p)
	stored, _ := feedAll(t, st, "s1")
	sameFrames(t, live, putAll(t, stored), 0)

	// The same session past a stored gap: a log that trims at 100 frames, with the store down meanwhile.
	trimmed := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	p2 := st.Persist("s2", "e1", trimmed, 0)
	defer p2.Stop()
	appendFrames(t, trimmed, 1, 50, never)
	flush(t, p2)
	srv.Stop()
	appendFrames(t, trimmed, 51, 2000, never)
	srv.Start()
	flush(t, p2)
	stored, _ = feedAll(t, st, "s2")
	hydrated := putAll(t, stored)
	if _, err := hydrated.Read(50, 10, nil); !errors.Is(err, eventlog.ErrTruncated) {
		t.Fatalf("read from before the gap: %v, want ErrTruncated", err)
	}
	first, last := trimmed.Bounds()
	if hfirst, hlast := hydrated.Bounds(); hlast != last || hfirst > first {
		t.Fatalf("hydrated bounds %d..%d, live %d..%d", hfirst, hlast, first, last)
	}
	sameFrames(t, trimmed, hydrated, first-1)
}

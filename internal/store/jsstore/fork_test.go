package jsstore_test

import (
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// lateFrames stores frames from+1..to of epoch as the old owner's writer would, late: through a persister
// of a log that holds them.
func lateFrames(t *testing.T, st *jsstore.Store, sid, epoch string, from, to uint64) {
	t.Helper()
	l := eventlog.NewLog(eventlog.LogLimits{})
	appendFrames(t, l, 1, to, never)
	p := st.Persist(sid, epoch, l, from)
	flush(t, p)
	p.Stop()
}

// A takeover forks at the durable head it read. A frame of the old owner that lands after that read makes the
// fork fail with ErrFenced; the writer reads again and forks after it. Frames of the old epoch that land after
// the fork are dropped by every reader.
func TestForkLosesFenceAndRetries(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{})
	lateFrames(t, st, "s1", "old", 0, 10)

	stored, fence := feedAll(t, st, "s1")
	checkFrames(t, stored, "old", 10, never)
	lateFrames(t, st, "s1", "old", 10, 11) // lands after the takeover's read

	closing := func(from uint64) []store.StoredFrame {
		return []store.StoredFrame{
			{Seq: from, Epoch: "new", Frame: frameOf(from, false)},
			{Seq: from + 1, Epoch: "new", Frame: frameOf(from+1, false)},
		}
	}
	if err := st.Fork(ctxT(t), "s1", fence, closing(11)); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Fork with a lost fence: %v, want ErrFenced", err)
	}
	stored, fence2 := feedAll(t, st, "s1")
	checkFrames(t, stored, "old", 11, never)
	if fence2 <= fence {
		t.Fatalf("fence did not move: %d then %d", fence, fence2)
	}
	if err := st.Fork(ctxT(t), "s1", fence2, closing(12)); err != nil {
		t.Fatalf("Fork after re-reading: %v", err)
	}
	lateFrames(t, st, "s1", "old", 11, 12) // stale: its epoch is retired

	stored, _ = feedAll(t, st, "s1")
	if len(stored) != 13 {
		t.Fatalf("stored %d frames, want 13", len(stored))
	}
	for i, f := range stored {
		seq := uint64(i + 1)
		epoch := "old"
		if seq > 11 {
			epoch = "new"
		}
		if f.Seq != seq || f.Epoch != epoch || string(f.Frame) != string(frameOf(seq, false)) {
			t.Fatalf("frame %d: seq %d epoch %q (%d bytes), want epoch %q", i, f.Seq, f.Epoch, len(f.Frame), epoch)
		}
	}
	if err := st.Fork(ctxT(t), "s1", fence2, closing(14)); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("second Fork on the same fence: %v, want ErrFenced", err)
	}
}

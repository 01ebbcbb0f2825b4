package eventlog

import (
	"errors"
	"fmt"
	"testing"
)

// TestLogPutMatchesAppend fills one log with Append and another with Put of the same seqs and frames: every
// read (entries, lag, head, truncation) is the same, under every limit.
func TestLogPutMatchesAppend(t *testing.T) {
	for _, lim := range []LogLimits{{}, {MaxFrames: 5}, {MaxBytes: 200}} {
		t.Run(fmt.Sprintf("%+v", lim), func(t *testing.T) {
			appended, put := NewLog(lim), NewLog(lim)
			for seq := uint64(1); seq <= 40; seq++ {
				frame := []byte(fmt.Sprintf(`{"seq":%d,"pad":"%*s"}`, seq, int(seq%7), ""))
				if _, err := appended.Append(KindUpdate, func(uint64) ([]byte, error) { return frame, nil }); err != nil {
					t.Fatal(err)
				}
				if err := put.Put(seq, KindUpdate, frame); err != nil {
					t.Fatalf("put %d: %v", seq, err)
				}
				for after := uint64(0); after <= seq; after++ {
					a, aerr := appended.Read(after, 100, nil)
					p, perr := put.Read(after, 100, nil)
					if !errors.Is(perr, aerr) || a.Head != p.Head || a.LagBytes != p.LagBytes || len(a.Entries) != len(p.Entries) {
						t.Fatalf("seq %d after %d: append %v head %d lag %d n %d; put %v head %d lag %d n %d", seq, after,
							aerr, a.Head, a.LagBytes, len(a.Entries), perr, p.Head, p.LagBytes, len(p.Entries))
					}
					for i := range a.Entries {
						if a.Entries[i].Seq != p.Entries[i].Seq || string(a.Entries[i].Frame) != string(p.Entries[i].Frame) {
							t.Fatalf("seq %d after %d: entry %d differs", seq, after, i)
						}
					}
				}
			}
		})
	}
}

// TestLogPutStartsAnywhereAndGaps checks the hydration rules: an empty log starts at any seq, a seq at or
// before the head is refused and changes nothing, and a gap restarts the ring so a reader before it gets
// ErrTruncated (and is woken to find out).
func TestLogPutStartsAnywhereAndGaps(t *testing.T) {
	l := NewLog(LogLimits{})
	if err := l.Put(100, KindUpdate, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if first, last := l.Bounds(); first != 100 || last != 100 || l.Head() != 100 {
		t.Fatalf("bounds %d..%d head %d, want 100..100", first, last, l.Head())
	}
	if _, err := l.Read(0, 10, nil); !errors.Is(err, ErrTruncated) {
		t.Fatalf("read before the start: %v, want ErrTruncated", err)
	}
	if err := l.Put(101, KindUpdate, []byte("bb")); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{0, 50, 100, 101} {
		if err := l.Put(seq, KindUpdate, []byte("x")); !errors.Is(err, ErrSeqOrder) {
			t.Fatalf("put %d: %v, want ErrSeqOrder", seq, err)
		}
	}
	caughtUp, err := l.Read(101, 10, nil)
	if err != nil || len(caughtUp.Entries) != 0 {
		t.Fatalf("caught-up read: %v %d entries", err, len(caughtUp.Entries))
	}
	if err := l.Put(200, KindUpdate, []byte("ccc")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-caughtUp.Wake:
	default:
		t.Fatal("a gap did not wake the waiting reader")
	}
	if _, err := l.Read(101, 10, nil); !errors.Is(err, ErrTruncated) {
		t.Fatalf("read across the gap: %v, want ErrTruncated", err)
	}
	res, err := l.Read(199, 10, nil)
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Seq != 200 || string(res.Entries[0].Frame) != "ccc" || res.LagBytes != 3 {
		t.Fatalf("read after the gap: %v %+v", err, res)
	}
	if first, last := l.Bounds(); first != 200 || last != 200 {
		t.Fatalf("bounds after the gap %d..%d, want 200..200", first, last)
	}
	if err := l.Put(201, KindUpdate, []byte("d")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := l.Put(202, KindUpdate, []byte("e")); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("put after close: %v", err)
	}
}

package eventlog

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func appendN(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.Append(KindUpdate, func(seq uint64) ([]byte, error) { return fmt.Appendf(nil, `{"seq":%d}`, seq), nil }); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLogContiguousSeqAndResumeFromAnyN(t *testing.T) {
	l := NewLog(LogLimits{})
	appendN(t, l, 50)
	for after := uint64(0); after <= 50; after++ {
		res, err := l.Read(after, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) != int(50-after) {
			t.Fatalf("after %d: got %d entries", after, len(res.Entries))
		}
		for i, e := range res.Entries {
			if want := after + 1 + uint64(i); e.Seq != want || string(e.Frame) != fmt.Sprintf(`{"seq":%d}`, want) {
				t.Fatalf("after %d: entry %d = %d %s", after, i, e.Seq, e.Frame)
			}
		}
	}
}

func TestLogTrimsOldestAndReportsTruncation(t *testing.T) {
	l := NewLog(LogLimits{MaxFrames: 10})
	appendN(t, l, 25)
	first, last := l.Bounds()
	if first != 16 || last != 25 {
		t.Fatalf("bounds %d..%d, want 16..25", first, last)
	}
	if _, err := l.Read(14, 10, nil); !errors.Is(err, ErrTruncated) {
		t.Fatalf("read after 14: %v, want ErrTruncated", err)
	}
	res, err := l.Read(15, 100, nil)
	if err != nil || len(res.Entries) != 10 || res.Entries[0].Seq != 16 {
		t.Fatalf("read after 15: %v %v", err, res.Entries)
	}
}

func TestLogByteLimitKeepsNewest(t *testing.T) {
	l := NewLog(LogLimits{MaxBytes: 20})
	appendN(t, l, 5) // each frame is 9-10 bytes
	first, last := l.Bounds()
	if last != 5 || first != 4 {
		t.Fatalf("bounds %d..%d, want 4..5", first, last)
	}
}

func TestLogLagBytes(t *testing.T) {
	l := NewLog(LogLimits{})
	appendN(t, l, 3) // 9 bytes each
	res, _ := l.Read(1, 1, nil)
	if res.LagBytes != 18 || res.Head != 3 {
		t.Fatalf("lag %d head %d", res.LagBytes, res.Head)
	}
}

// TestLogConcurrentReadersSeeEveryFrameInOrder runs readers against a concurrent appender: each must see
// exactly 1..N, the property every face relies on.
func TestLogConcurrentReadersSeeEveryFrameInOrder(t *testing.T) {
	const n = 2000
	l := NewLog(LogLimits{})
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cursor uint64
			var buf []Entry
			for cursor < n {
				res, err := l.Read(cursor, 64, buf)
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range res.Entries {
					if e.Seq != cursor+1 {
						t.Errorf("got seq %d after %d", e.Seq, cursor)
						return
					}
					cursor = e.Seq
				}
				if len(res.Entries) == 0 {
					<-res.Wake
				}
				buf = res.Entries
			}
		}()
	}
	appendN(t, l, n)
	wg.Wait()
}

func TestLogCloseWakesReaders(t *testing.T) {
	l := NewLog(LogLimits{})
	res, _ := l.Read(0, 10, nil)
	l.Close()
	<-res.Wake
	if _, err := l.Append(KindUpdate, func(uint64) ([]byte, error) { return []byte(`{}`), nil }); err == nil {
		t.Fatal("append after close succeeded")
	}
	res, _ = l.Read(0, 10, nil)
	if !res.Closed {
		t.Fatal("not closed")
	}
}

func TestLogPinKeepsUnstoredFrames(t *testing.T) {
	l := NewLog(LogLimits{MaxFrames: 2})
	pin := l.Pin(100)
	frame := func(uint64) ([]byte, error) { return []byte("0123456789"), nil } // 10 bytes
	for range 5 {
		if _, err := l.Append(KindUpdate, frame); err != nil {
			t.Fatal(err)
		}
	}
	if first, last := l.Bounds(); first != 1 || last != 5 {
		t.Fatalf("unacknowledged frames trimmed: bounds %d..%d, want 1..5", first, last)
	}
	pin.Store(3) // frames 1..3 stored: the limit applies to them again
	l.Append(KindUpdate, frame)
	if first, last := l.Bounds(); first != 4 || last != 6 {
		t.Fatalf("bounds %d..%d after the store caught up, want 4..6 (4 is not stored yet)", first, last)
	}
	for range 20 { // past 100 bytes pinned, the log trims unstored frames too
		l.Append(KindUpdate, frame)
	}
	if _, err := l.Read(3, 10, nil); err != ErrTruncated {
		t.Fatalf("read after the pin gave way: %v, want ErrTruncated", err)
	}
	if first, last := l.Bounds(); last-first+1 > 11 {
		t.Fatalf("log holds %d frames past the pin's byte cap", last-first+1)
	}
}

// TestLogLagBytesMatchesReadAndArmsNoWake: LagBytes reports what Read reports as LagBytes (and
// ErrTruncated), but hands out no wake: the next append allocates no channel for it.
func TestLogLagBytesMatchesReadAndArmsNoWake(t *testing.T) {
	l := NewLog(LogLimits{MaxFrames: 64})
	appendN(t, l, 100)
	for after := uint64(30); after <= 101; after++ {
		lag, err := l.LagBytes(after)
		res, rerr := l.Read(after, 0, nil)
		if lag != res.LagBytes || !errors.Is(err, rerr) || (after < 36) != errors.Is(err, ErrTruncated) {
			t.Fatalf("after %d: LagBytes %d, %v; Read %d, %v", after, lag, err, res.LagBytes, rerr)
		}
	}
	appendN(t, l, 1) // the wake the Reads above handed out
	frame := []byte(`{}`)
	encode := func(uint64) ([]byte, error) { return frame, nil }
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := l.LagBytes(l.Head() - 10); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(KindUpdate, encode); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("an append after LagBytes allocates %v times, want 0", allocs)
	}
}

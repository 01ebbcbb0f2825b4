package storedlog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/store"
)

// rec is a whole stored frame of epoch e; its bytes name it, so a test sees which message an output came from.
func rec(e string, seq uint64) Record {
	return Record{Epoch: e, Seq: seq, Part: 1, Parts: 1, Data: []byte(fmt.Sprintf("%s/%d", e, seq))}
}

func gapRec(e string, from, to uint64) Record {
	return Record{Epoch: e, Seq: from, GapTo: to, Part: 1, Parts: 1}
}

// partRec is part i of n of the frame rec(e, seq), one byte each (the last part takes the rest).
func partRec(e string, seq uint64, i, n int) Record {
	whole := rec(e, seq).Data
	from, to := i-1, i
	if i == n {
		to = len(whole)
	}
	return Record{Epoch: e, Seq: seq, Part: i, Parts: n, Data: whole[from:to]}
}

func parts(e string, seq uint64, n int, order ...int) []Record {
	var out []Record
	for _, i := range order {
		out = append(out, partRec(e, seq, i, n))
	}
	return out
}

func cat(groups ...[]Record) []Record {
	var out []Record
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func recs(rs ...Record) []Record { return rs }

// show renders folded output: "e1/1" for a frame, "gap 2-3@e1" for a gap.
func show(frames []store.StoredFrame) string {
	var b []string
	for _, f := range frames {
		if f.GapTo > 0 {
			b = append(b, fmt.Sprintf("gap %d-%d@%s", f.Seq, f.GapTo, f.Epoch))
			continue
		}
		if want := fmt.Sprintf("%s/%d", f.Epoch, f.Seq); string(f.Frame) != want {
			b = append(b, fmt.Sprintf("%s(seq %d %s)", f.Frame, f.Seq, f.Epoch))
			continue
		}
		b = append(b, string(f.Frame))
	}
	return strings.Join(b, " ")
}

func runFold(t *testing.T, maxPending int, in []Record, settle bool) (string, *Folder) {
	t.Helper()
	var out []store.StoredFrame
	f := NewFolder(maxPending, func(fr store.StoredFrame) error { out = append(out, fr); return nil })
	for _, r := range in {
		if err := f.fold(r); err != nil {
			t.Fatal(err)
		}
	}
	if settle {
		if err := f.Settle(); err != nil {
			t.Fatal(err)
		}
	}
	return show(out), f
}

func TestFold(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxPending int
		in         []Record
		want       string
		anomalies  uint64
		stale      uint64
	}{
		{name: "in order", in: recs(rec("a", 1), rec("a", 2), rec("a", 3)), want: "a/1 a/2 a/3"},
		{name: "duplicates dropped", in: recs(rec("a", 1), rec("a", 2), rec("a", 2), rec("a", 1), rec("a", 3)),
			want: "a/1 a/2 a/3"},
		{name: "hole filled late", in: recs(rec("a", 1), rec("a", 3), rec("a", 4), rec("a", 2), rec("a", 3)),
			want: "a/1 a/2 a/3 a/4"},
		{name: "final hole becomes a gap", in: recs(rec("a", 1), rec("a", 3), rec("a", 5)),
			want: "a/1 gap 2-2@a a/3 gap 4-4@a a/5"},
		{name: "starts where the stream was trimmed", in: recs(rec("a", 5), rec("a", 6)), want: "a/5 a/6"},
		{name: "first frames land late", in: recs(rec("a", 3), rec("a", 4), rec("a", 1), rec("a", 2)),
			want: "a/1 a/2 a/3 a/4"},
		{name: "trimmed start then a fork", in: recs(rec("a", 5), rec("a", 6), rec("b", 7), rec("a", 7)),
			want: "a/5 a/6 b/7", stale: 1},
		{name: "fork at last+1 retires the old epoch",
			in:   recs(rec("a", 1), rec("a", 2), rec("b", 3), rec("a", 3), rec("a", 4), rec("b", 4)),
			want: "a/1 a/2 b/3 b/4", stale: 2},
		{name: "new epoch elsewhere than last+1 is an anomaly",
			in:   recs(rec("a", 1), rec("b", 5), rec("b", 1), rec("a", 2)),
			want: "a/1 a/2", anomalies: 2},
		{name: "fork drops the out-of-order buffer",
			in:   recs(rec("a", 1), rec("a", 3), rec("b", 2), rec("a", 2), rec("b", 3)),
			want: "a/1 b/2 b/3", stale: 1},
		{name: "gap marker", in: recs(rec("a", 1), gapRec("a", 2, 4), rec("a", 5)), want: "a/1 gap 2-4@a a/5"},
		{name: "gap marker overlapping emitted frames",
			in:   recs(rec("a", 1), rec("a", 2), rec("a", 3), gapRec("a", 2, 5), rec("a", 6)),
			want: "a/1 a/2 a/3 gap 4-5@a a/6"},
		{name: "buffered gap marker released by the fill",
			in:   recs(rec("a", 1), gapRec("a", 3, 4), rec("a", 5), rec("a", 2)),
			want: "a/1 a/2 gap 3-4@a a/5"},
		{name: "fork frame is a gap", in: recs(rec("a", 1), gapRec("b", 2, 3), rec("b", 4)),
			want: "a/1 gap 2-3@b b/4"},
		{name: "parts joined", in: cat(recs(rec("a", 1)), parts("a", 2, 3, 1, 2, 3), recs(rec("a", 3))),
			want: "a/1 a/2 a/3"},
		{name: "parts republished after a failure",
			in:   cat(recs(rec("a", 1)), parts("a", 2, 3, 1, 2, 1, 2, 3, 3), recs(rec("a", 3))),
			want: "a/1 a/2 a/3"},
		{name: "leading parts trimmed", in: cat(parts("a", 4, 3, 2, 3), recs(rec("a", 5))), want: "a/5"},
		{name: "missing part leaves a hole",
			in:   cat(recs(rec("a", 1)), parts("a", 2, 3, 1, 3), recs(rec("a", 3))),
			want: "a/1 gap 2-2@a a/3"},
		{name: "buffer overflow gives the lowest hole up", maxPending: 2,
			in:   recs(rec("a", 1), rec("a", 3), rec("a", 4), rec("a", 5), rec("a", 2)),
			want: "a/1 gap 2-2@a a/3 a/4 a/5"},
		{name: "stale frames of an epoch retired two forks ago",
			in:   recs(rec("a", 1), rec("b", 2), rec("c", 3), rec("a", 4), rec("b", 4), rec("c", 4)),
			want: "a/1 b/2 c/3 c/4", stale: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, f := runFold(t, max(tc.maxPending, 256), tc.in, true)
			if tc.maxPending > 0 {
				got, f = runFold(t, tc.maxPending, tc.in, true)
			}
			if got != tc.want || f.anomalies != tc.anomalies || f.stale != tc.stale {
				t.Fatalf("fold = %q (anomalies %d, stale %d), want %q (%d, %d)",
					got, f.anomalies, f.stale, tc.want, tc.anomalies, tc.stale)
			}
		})
	}
}

// Not settled (a live feed), a hole stays open: the writer may still fill it.
func TestFoldLiveKeepsHoleOpen(t *testing.T) {
	got, _ := runFold(t, 256, recs(rec("a", 1), rec("a", 3)), false)
	if got != "a/1" {
		t.Fatalf("fold = %q, want a/1 with 3 held back", got)
	}
}

// A live feed waits for seq 1 until it has read what was stored, then starts at the oldest frame held.
func TestFoldSettleStart(t *testing.T) {
	var out []store.StoredFrame
	f := NewFolder(256, func(fr store.StoredFrame) error { out = append(out, fr); return nil })
	for _, r := range recs(rec("a", 5), rec("a", 6)) {
		if err := f.fold(r); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 0 {
		t.Fatalf("emitted %s before the start was settled", show(out))
	}
	if err := f.SettleStart(); err != nil {
		t.Fatal(err)
	}
	if err := f.fold(rec("a", 7)); err != nil {
		t.Fatal(err)
	}
	if got := show(out); got != "a/5 a/6 a/7" {
		t.Fatalf("fold = %q, want a/5 a/6 a/7", got)
	}
}

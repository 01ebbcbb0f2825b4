package eventlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestLogRingMatchesModel drives the log's ring (growth, wrap-around, trimming by frames and bytes) against
// a plain slice and checks every read: entries, truncation, lag and head.
func TestLogRingMatchesModel(t *testing.T) {
	for _, lim := range []LogLimits{{}, {MaxFrames: 1}, {MaxFrames: 16}, {MaxFrames: 17}, {MaxFrames: 100}, {MaxBytes: 300}, {MaxFrames: 40, MaxBytes: 700}} {
		t.Run(fmt.Sprintf("%+v", lim), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(lim.MaxFrames)+uint64(lim.MaxBytes)))
			l := NewLog(lim)
			type ent struct {
				seq    uint64
				frame  string
				offset int64
			}
			var model []ent
			var total, held int64
			var buf []Entry
			for seq := uint64(1); seq <= 600; seq++ {
				frame := fmt.Sprintf(`{"seq":%d,"pad":"%*s"}`, seq, rng.IntN(20), "")
				if got, err := l.Append(KindUpdate, func(s uint64) ([]byte, error) { return []byte(frame), nil }); err != nil || got != seq {
					t.Fatalf("append %d: %d %v", seq, got, err)
				}
				model = append(model, ent{seq, frame, total})
				total += int64(len(frame))
				held += int64(len(frame))
				for len(model) > 1 && (lim.MaxFrames > 0 && len(model) > lim.MaxFrames || lim.MaxBytes > 0 && held > lim.MaxBytes) {
					held -= int64(len(model[0].frame))
					model = model[1:]
				}
				if first, last := l.Bounds(); first != model[0].seq || last != seq {
					t.Fatalf("bounds %d..%d, want %d..%d", first, last, model[0].seq, seq)
				}
				for k := 0; k < 3; k++ {
					after := uint64(rng.IntN(int(seq) + 1))
					maxN := 1 + rng.IntN(300)
					res, err := l.Read(after, maxN, buf)
					if after+1 < model[0].seq {
						if !errors.Is(err, ErrTruncated) {
							t.Fatalf("read after %d (first %d): %v", after, model[0].seq, err)
						}
						continue
					}
					if err != nil || res.Head != seq {
						t.Fatalf("read after %d: %v head %d", after, err, res.Head)
					}
					i := int(after + 1 - model[0].seq)
					want := model[i:min(len(model), i+maxN)]
					if len(res.Entries) != len(want) {
						t.Fatalf("read after %d max %d: %d entries, want %d", after, maxN, len(res.Entries), len(want))
					}
					for j, e := range res.Entries {
						if e.Seq != want[j].seq || string(e.Frame) != want[j].frame {
							t.Fatalf("read after %d: entry %d = %d %s, want %d %s", after, j, e.Seq, e.Frame, want[j].seq, want[j].frame)
						}
					}
					if len(want) > 0 && res.LagBytes != total-want[0].offset {
						t.Fatalf("lag %d, want %d", res.LagBytes, total-want[0].offset)
					}
					buf = res.Entries
				}
			}
		})
	}
}

// TestLogWakesEveryHandedOutChannel: an append closes the channel a Read handed out, and appends nobody read
// in between still leave a fresh channel for the next reader.
func TestLogWakesEveryHandedOutChannel(t *testing.T) {
	l := NewLog(LogLimits{})
	appendN(t, l, 3) // no reader: no channel churn, nothing to wake
	res, _ := l.Read(3, 10, nil)
	select {
	case <-res.Wake:
		t.Fatal("woken without an append")
	default:
	}
	appendN(t, l, 1)
	<-res.Wake
	res2, _ := l.Read(3, 10, nil) // got the entry; still its channel must close on the next append
	appendN(t, l, 2)
	<-res2.Wake
	res3, _ := l.Read(6, 10, nil)
	select {
	case <-res3.Wake:
		t.Fatal("fresh channel already closed")
	default:
	}
	l.Close()
	<-res3.Wake
}

func BenchmarkLogAppend(b *testing.B) {
	l := NewLog(LogLimits{MaxFrames: 10000, MaxBytes: 64 << 20})
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)
	var buf []Entry
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = l.Append(KindUpdate, func(uint64) ([]byte, error) { return frame, nil })
		if i++; i%8 == 0 { // a reader that keeps up in batches of 8
			res, _ := l.Read(l.Head()-8, 256, buf)
			buf = res.Entries
		}
	}
}

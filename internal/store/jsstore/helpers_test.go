package jsstore_test

import (
	"context"
	"encoding/binary"

	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// frameOf is the deterministic frame of seq: a JSON-RPC line for most, big random-looking ones where big says
// so, so a reader can check every stored byte without the test keeping the frames.
func frameOf(seq uint64, big bool) []byte {
	if !big {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"gateway":{"seq":%d}},"text":"%x"}}`, seq, seq*0x9e3779b97f4a7c15)
	}
	b := make([]byte, 3<<20)
	r := rand.NewPCG(seq, 7)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}

// appendFrames appends seqs from..to to l, frames from frameOf.
func appendFrames(t testing.TB, l *eventlog.Log, from, to uint64, big func(uint64) bool) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		got, err := l.Append(eventlog.KindUpdate, func(s uint64) ([]byte, error) {
			if s != seq {
				return nil, fmt.Errorf("append got seq %d, want %d", s, seq)
			}
			return frameOf(s, big(s)), nil
		})
		if err != nil || got != seq {
			t.Fatalf("append %d: %d %v", seq, got, err)
		}
	}
}

func never(uint64) bool { return false }

func open(t testing.TB, srv *natstest.Server, opts jsstore.Options) *jsstore.Store {
	t.Helper()
	st, err := jsstore.Open(ctxT(t), srv.Connect(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// ctxT is a context that ends with the test, bounded so a hang fails instead of stalling the run.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// feedAll reads the stored frames of sid (not live).
func feedAll(t testing.TB, st *jsstore.Store, sid string) ([]store.StoredFrame, uint64) {
	t.Helper()
	var out []store.StoredFrame
	fence, err := st.Feed(ctxT(t), sid, false, func(f store.StoredFrame) error {
		out = append(out, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, fence
}

// checkFrames checks that stored holds seq 1..n exactly once each, in order, byte-identical to frameOf.
func checkFrames(t testing.TB, stored []store.StoredFrame, epoch string, n uint64, big func(uint64) bool) {
	t.Helper()
	var seq uint64
	for _, f := range stored {
		seq++
		if f.GapTo != 0 {
			t.Fatalf("gap %d-%d in the stored log", f.Seq, f.GapTo)
		}
		if f.Seq != seq || f.Epoch != epoch {
			t.Fatalf("stored frame %d: seq %d epoch %q, want seq %d epoch %q", seq, f.Seq, f.Epoch, seq, epoch)
		}
		if want := frameOf(seq, big(seq)); string(f.Frame) != string(want) {
			t.Fatalf("frame %d differs: %d bytes, want %d", seq, len(f.Frame), len(want))
		}
	}
	if seq != n {
		t.Fatalf("stored %d frames, want %d", seq, n)
	}
}

// flush waits until p acknowledged everything l holds.
func flush(t testing.TB, p store.Persister) {
	t.Helper()
	if err := p.Flush(ctxT(t)); err != nil {
		t.Fatalf("flush: %v; durable %d, stats %+v", err, p.Durable(), p.Stats())
	}
}

// waitFor polls cond until it holds, failing the test after a bound (slow shared machines included).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

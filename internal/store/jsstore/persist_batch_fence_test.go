package jsstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
)

// A retired owner's batch, built after its writer last synced and sent after a takeover's fork, is refused
// whole: none of its frames reaches the log and the writer comes out fenced.
func TestPersistBatchRefusedAfterTakeover(t *testing.T) {
	nc, shutdown, _, err := Embedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Open(ctx, nc, Options{Fence: true})
	if err != nil {
		t.Fatal(err)
	}
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	for seq := uint64(1); seq <= 10; seq++ {
		if _, err := l.Append(eventlog.KindUpdate, func(uint64) ([]byte, error) { return []byte(`{"n":1}`), nil }); err != nil {
			t.Fatal(err)
		}
	}
	p := &persister{st: st, epoch: "e1", subject: st.opts.logSubject("s1"), log: l, partSize: 1 << 16,
		pin: l.Pin(st.opts.MaxLag), advanced: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	w := writer{p: p, lost: time.NewTimer(time.Hour)}
	defer w.lost.Stop()
	if !w.batching() {
		t.Fatal("the fenced writer does not batch")
	}
	if err := w.resync(false); err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(0, readBatch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Fork(ctx, "s1", w.last, []store.StoredFrame{{Seq: 1, Epoch: "e2", Frame: []byte(`{"n":2}`)}}); err != nil {
		t.Fatalf("takeover fork: %v", err)
	}
	if err := w.publishBatches(res.Entries); err != nil {
		t.Fatal(err)
	}
	err = w.awaitOldest(nil)
	if !isWrongLastSequence(err) {
		t.Fatalf("the retired owner's batch: %v, want wrong last sequence", err)
	}
	if err := w.recover(err); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("recover: %v, want ErrFenced", err)
	}
	info, err := st.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the log holds %d messages, want only the fork's", info.State.Msgs)
	}
}

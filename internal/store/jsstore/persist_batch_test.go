package jsstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A fenced writer stores what one ring read holds as one atomic batch, so its one publish in flight carries
// many frames.
func TestPersistFencedStoresBatches(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{Fence: true})
	persistAndCheckBatch(t, st, 100)
}

// persistAndCheckBatch stores n frames that the ring holds before the writer starts and checks that they
// were stored as one batch.
func persistAndCheckBatch(t *testing.T, st *jsstore.Store, n uint64) {
	t.Helper()
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 1000})
	appendFrames(t, l, 1, n, never)
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	flush(t, p)
	stored, _ := feedAll(t, st, "s1")
	checkFrames(t, stored, "e1", n, never)
	var batches []string
	for _, h := range storedHeaders(t, st.Conn(), "acpgw-log", "acpgw.log.s1") {
		if id := h.Get("Nats-Batch-Id"); !slices.Contains(batches, id) {
			batches = append(batches, id)
		}
	}
	if len(batches) != 1 || batches[0] == "" {
		t.Fatalf("%d frames stored in batches %q, want one batch", n, batches)
	}
}

// A log stream an older gateway created (no atomic batches) is updated when the store opens, and a fenced
// writer batches on it.
func TestOpenAllowsAtomicPublishOnOlderStream(t *testing.T) {
	srv := natstest.Embedded(t)
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{
		Name: "acpgw-log", Subjects: []string{"acpgw.log.*"}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxMsgsPerSubject: -1, AllowDirect: true,
	}); err != nil {
		t.Fatal(err)
	}
	st := open(t, srv, jsstore.Options{Fence: true})
	s, err := js.Stream(ctxT(t), "acpgw-log")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctxT(t)); err != nil || !info.Config.AllowAtomicPublish {
		t.Fatalf("log stream after Open: AllowAtomicPublish false (%v)", err)
	}
	persistAndCheckBatch(t, st, 50)
}

// A stream whose atomic batches were turned off after the store opened (an older gateway updated it) refuses
// the writer's batch: the writer goes on one message at a time and stores every frame once.
func TestPersistFencedWithoutAtomicPublish(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{Fence: true})
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctxT(t), "acpgw-log")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.AllowAtomicPublish = false
	if _, err := js.UpdateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	appendFrames(t, l, 1, 20, never)
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	flush(t, p)
	if got, want := len(storedIDs(t, st.Conn(), "acpgw-log", "acpgw.log.s1")), 20; got != want {
		t.Fatalf("%d messages stored, want %d", got, want)
	}
	stored, _ := feedAll(t, st, "s1")
	checkFrames(t, stored, "e1", 20, never)
}

// A writer of the same epoch that starts behind what the store holds (a batch stored whose ack was lost)
// has its batch refused for the duplicates, finds its own last frame stored and goes on after it: nothing
// is stored twice.
func TestPersistFencedBatchAfterLostAck(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{Fence: true})
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	appendFrames(t, l, 1, 3, never)
	p := st.Persist("s1", "e1", l, 0)
	flush(t, p)
	p.Stop()

	appendFrames(t, l, 4, 6, never)
	p2 := st.Persist("s1", "e1", l, 0) // from 0: frames 1..3 look unacknowledged
	defer p2.Stop()
	flush(t, p2)
	want := []string{"e1.1", "e1.2", "e1.3", "e1.4", "e1.5", "e1.6"}
	if got := storedIDs(t, st.Conn(), "acpgw-log", "acpgw.log.s1"); !slices.Equal(got, want) {
		t.Fatalf("stored messages %v, want %v", got, want)
	}
	if d := p2.Durable(); d != 6 {
		t.Fatalf("Durable() = %d, want 6", d)
	}
}

// A server configured with a max_batch_size below the writer's batch refuses the batch as too large: the
// writer goes on with smaller batches instead of one message at a time, and stores every frame once.
func TestPersistFencedAdaptsToServerBatchLimit(t *testing.T) {
	opts := jsstore.ServerOptions(t.TempDir())
	opts.JetStreamLimits.MaxBatchSize = 100
	srv, err := jsstore.StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	nc, err := nats.Connect("", append(jsstore.ConnectOptions(), nats.InProcessServer(srv))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	st, err := jsstore.Open(ctxT(t), nc, jsstore.Options{Fence: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 1000})
	appendFrames(t, l, 1, n, never)
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	flush(t, p)
	stored, _ := feedAll(t, st, "s1")
	checkFrames(t, stored, "e1", n, never)
	batches := map[string]int{}
	for _, h := range storedHeaders(t, nc, "acpgw-log", "acpgw.log.s1") {
		batches[h.Get("Nats-Batch-Id")]++
	}
	if alone := batches[""]; alone > 0 || len(batches) > n/50 {
		t.Fatalf("%d frames stored in %d batches, %d alone; want batches the server takes", n, len(batches), alone)
	}
	// The first batch held all n frames; halving the refused batch (not the writer's limit) takes two refusals.
	if refused := p.Stats().Errors; refused > 2 {
		t.Fatalf("%d batches refused before the server took one, want at most 2", refused)
	}
}

// A batch's bytes, its headers included, stay within atomicBatchBytes (1 MiB): 1 000 frames of 1 000 bytes
// fit in it without their headers, not with them.
func TestPersistFencedBatchBytesCountHeaders(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{Fence: true})
	const n, size = 1000, 1000
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 2 * n})
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("x", size-64) + `"}}`)
	frame = frame[:size-1]
	frame = append(frame, '}')
	for range n {
		if _, err := l.Append(eventlog.KindUpdate, func(uint64) ([]byte, error) { return frame, nil }); err != nil {
			t.Fatal(err)
		}
	}
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	flush(t, p)
	batchBytes := map[string]int{}
	for _, m := range storedMessages(t, st.Conn(), "acpgw-log", "acpgw.log.s1") {
		batchBytes[m.header.Get("Nats-Batch-Id")] += m.bytes
	}
	for id, b := range batchBytes {
		if id == "" || b > 1<<20 {
			t.Fatalf("batch %q holds %d bytes, want at most %d (%d batches)", id, b, 1<<20, len(batchBytes))
		}
	}
}
